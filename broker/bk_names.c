/* bk_names.c: the topic / group naming rule. */
#include "bk_names.h"

int bk_name_is_valid(const char *name, size_t len, const char **why)
{
    if (len == 0) {
        *why = "must not be empty";
        return 0;
    }
    if (len > BK_NAME_MAX) {
        *why = "must be at most 127 bytes";
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '%' || c == '|' || c == '_' || c == '-';
        if (!ok) {
            *why = "may contain only the characters %|a-zA-Z0-9_-";
            return 0;
        }
    }
    return 1;
}
