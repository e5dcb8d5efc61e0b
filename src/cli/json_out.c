/* JSON output helpers shared by the commands that print JSON by hand. */
#include <stdio.h>

#include "cli/cli.h"

void cb_json_string(FILE *to, const char *s)
{
    fputc('"', to);
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; ++c) {
        if (*c == '"' || *c == '\\') {
            fprintf(to, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(to, "\\u%04x", *c);
        } else {
            fputc(*c, to);
        }
    }
    fputc('"', to);
}
