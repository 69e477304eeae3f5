/* bk_names.h: the naming rule for topics and groups, shared by every
 * handler that takes one: characters %|a-zA-Z0-9_- and 1..127 bytes. */
#ifndef BK_NAMES_H
#define BK_NAMES_H

#include <stddef.h>

#define BK_NAME_MAX 127

/* 1 if name[0..len) follows the rule. On 0, *why names the broken rule. */
int bk_name_is_valid(const char *name, size_t len, const char **why);

#endif
