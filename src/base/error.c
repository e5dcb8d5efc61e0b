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

cb_result cb_error_set(cb_error *err, cb_result code, const char *fmt, ...)
{
    if (err != NULL) {
        err->code = code;
        va_list args;
        va_start(args, fmt);
        /* vsnprintf truncates and always terminates: a long name cannot overflow the message. */
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return code;
}
