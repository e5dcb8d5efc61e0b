#include <stdarg.h>
#include <stdio.h>

#include "import/import_impl.h"

cb_result imp_error(cb_error *err, cb_result code, const char *fmt, ...)
{
    if (err != NULL) {
        err->code = code;
        va_list args;
        va_start(args, fmt);
        /* vsnprintf truncates and always terminates. */
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return code;
}
