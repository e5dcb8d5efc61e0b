#include <stdio.h>

#include "base/base_impl.h"

const char *cb_result_str(cb_result result)
{
    switch (result) {
#define CB_RESULT_STR_CASE(name, text)                                                             \
    case name:                                                                                     \
        return #name ": " text;
        CB_RESULT_LIST(CB_RESULT_STR_CASE)
#undef CB_RESULT_STR_CASE
    case _CB_RESULT_COUNT:
        break;
    }
    return "unknown cb_result";
}
