/* ns_kvstore.c: loading and saving the KV config file (see ns_kvstore.h). */
#include "ns_kvstore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_file.h"

#define NS_KV_LINE_MAX 65536

/* Writes s with \\, \t, \n, \r escaped. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\\': fputs("\\\\", f); break;
        case '\t': fputs("\\t", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        default: fputc(*s, f); break;
        }
    }
}

static int write_entry(const char *ns, const char *key, const char *value, void *arg)
{
    FILE *f = arg;

    put_escaped(f, ns);
    fputc('\t', f);
    put_escaped(f, key);
    fputc('\t', f);
    put_escaped(f, value);
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

rmq_err_t ns_kvstore_save(const ns_route_t *rt, const char *path, char *why, size_t whylen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return snprintf(why, whylen, "out of memory"), RMQ_ENOMEM;
    int formatted = ns_route_kv_foreach(rt, write_entry, f) == 0;
    if (fclose(f) != 0 || !formatted) {
        free(text);
        return snprintf(why, whylen, "cannot format the KV config: out of memory"), RMQ_ENOMEM;
    }
    rmq_err_t rc = rmq_file_write_atomic(path, text, len);
    free(text);
    if (rc != RMQ_OK)
        snprintf(why, whylen, "cannot write %s: %s", path, rmq_strerror(rc));
    return rc;
}

/* Unescapes s in place up to the next unescaped tab or the end; returns
 * the start of the next field (after the tab), "" at the end, or NULL on a
 * bad escape. *had_tab says whether a tab ended the field. */
static char *take_field(char *s, int *had_tab)
{
    char *out = s;

    *had_tab = 0;
    for (; *s; s++) {
        if (*s == '\t') {
            *had_tab = 1;
            *out = '\0';
            return s + 1;
        }
        if (*s != '\\') {
            *out++ = *s;
            continue;
        }
        s++;
        switch (*s) {
        case '\\': *out++ = '\\'; break;
        case 't': *out++ = '\t'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        default: return NULL;
        }
    }
    *out = '\0';
    return s;
}

/* Parses one line (newline stripped) into rt. */
static rmq_err_t load_line(ns_route_t *rt, char *line)
{
    int tab1, tab2, tab3;
    char *ns = line;
    char *key = take_field(ns, &tab1);
    char *value = key && tab1 ? take_field(key, &tab2) : NULL;
    char *end = value && tab2 ? take_field(value, &tab3) : NULL;

    if (!end || tab3 || *end)
        return RMQ_ECORRUPT;
    rmq_err_t err = ns_route_kv_put(rt, ns, key, value);
    return err == RMQ_EINVAL ? RMQ_ECORRUPT : err;
}

rmq_err_t ns_kvstore_load(ns_route_t *rt, const char *path, char *why, size_t whylen)
{
    FILE *f = fopen(path, "r");
    char *line;
    int lineno = 0;
    rmq_err_t err = RMQ_OK;

    if (!f) {
        if (errno == ENOENT)
            return RMQ_OK;
        snprintf(why, whylen, "open %s: %s", path, strerror(errno));
        return RMQ_EIO;
    }
    line = malloc(NS_KV_LINE_MAX);
    if (!line) {
        fclose(f);
        return RMQ_ENOMEM;
    }
    while (err == RMQ_OK && fgets(line, NS_KV_LINE_MAX, f)) {
        size_t len = strlen(line);
        lineno++;
        if (len == 0 || line[len - 1] != '\n') {
            snprintf(why, whylen, "%s:%d: line too long or not terminated", path, lineno);
            err = RMQ_ECORRUPT;
            break;
        }
        line[len - 1] = '\0';
        err = load_line(rt, line);
        if (err == RMQ_ECORRUPT)
            snprintf(why, whylen, "%s:%d: not \"namespace<TAB>key<TAB>value\" with valid escapes",
                     path, lineno);
        else if (err != RMQ_OK)
            snprintf(why, whylen, "%s:%d: %s", path, lineno, rmq_strerror(err));
    }
    if (err == RMQ_OK && ferror(f)) {
        snprintf(why, whylen, "read %s: %s", path, strerror(errno));
        err = RMQ_EIO;
    }
    free(line);
    fclose(f);
    return err;
}
