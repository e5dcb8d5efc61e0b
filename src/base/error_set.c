#include <stdarg.h>
#include <stdio.h>

#include "base/base_impl.h"

/* Its own file: the runtime compiles it once per kernel set (renamed with the set's other
 * internals), and the offline libraries (import, export) link their own copy through
 * cb_tool_support_dep, since a dispatch library exports only the public API. */
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
