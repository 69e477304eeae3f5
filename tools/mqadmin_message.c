/* mqadmin_message.c: message ids and queryMsgById. An id is 32 hex digits
 * (IPv4 store host, 8; port, 8; commit-log offset, 16) or 56 with an IPv6
 * store host (32 + 8 + 16: rmq_msg_id_parse); it names the broker
 * to ask (VIEW_MESSAGE_BY_ID) and where the record is. The record is
 * decoded with the shared codec and printed field by field, its body as
 * text when it is printable UTF-8, else as a hex dump, cut at 4 KiB unless
 * --full. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_message.h"

#define BODY_SHOWN_MAX 4096
#define HEX_ROW 16

/* ---- printing ------------------------------------------------------------ */

/* 1 when data is valid UTF-8 with no control characters but \n, \r, \t. */
static int is_text(const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t c = data[i];
        size_t seq = c >= 0x80 ? adm_utf8_seq(data, len, i) : 1;
        if (seq == 0 || c == 0x7f || (c < 0x20 && c != '\n' && c != '\r' && c != '\t'))
            return 0;
        i += seq - 1;
    }
    return 1;
}

/* Hex dump rows: offset, 16 bytes in hex, the same as ASCII. */
static void print_hex(const uint8_t *data, size_t len)
{
    for (size_t row = 0; row < len; row += HEX_ROW) {
        printf("%08zx ", row);
        for (size_t k = 0; k < HEX_ROW; k++) {
            if (row + k < len)
                printf(" %02x", data[row + k]);
            else
                printf("   ");
        }
        printf("  |");
        for (size_t k = 0; k < HEX_ROW && row + k < len; k++)
            putchar(data[row + k] >= 0x20 && data[row + k] < 0x7f ? data[row + k] : '.');
        printf("|\n");
    }
}

/* Prints the body as text or hex, cut at BODY_SHOWN_MAX (on a UTF-8
 * character boundary) unless full. */
static void print_body(const uint8_t *body, size_t len, int full)
{
    size_t shown = full || len <= BODY_SHOWN_MAX ? len : BODY_SHOWN_MAX;
    int text;

    while (shown > 0 && shown < len && (body[shown] & 0xC0) == 0x80)
        shown--;
    text = is_text(body, shown);
    printf("Body (%s):\n", text ? "text" : "binary, hex");
    if (text)
        printf("%.*s\n", (int)shown, (const char *)body);
    else
        print_hex(body, shown);
    if (shown < len)
        printf("(body truncated: showing %zu of %zu bytes; use --full for all)\n", shown, len);
}

/* "name=value, name=value" from the \x01 / \x02 encoded properties
 * (caller frees), or NULL when out of memory. */
static char *props_string(const char *props, size_t len)
{
    char *out = malloc(2 * len + 1), *p = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (props[i] == '\x01') {
            *p++ = '=';
        } else if (props[i] != '\x02') {
            *p++ = props[i];
        } else if (i + 1 < len) {
            *p++ = ',';
            *p++ = ' ';
        }
    }
    *p = '\0';
    return out;
}

char *adm_prop_cell(const rmq_record_t *rec, const char *name, size_t max)
{
    size_t vlen = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, name, &vlen);

    return v ? adm_cell_escape((const uint8_t *)v, vlen, max) : adm_cell_escape((const uint8_t *)"-", 1, 1);
}

static void time_cell(int64_t ms, char *buf, size_t len)
{
    char human[40];

    adm_time_format(ms, human, sizeof human);
    snprintf(buf, len, "%s (%" PRId64 ")", human, ms);
}

void adm_print_record(const char *id, const rmq_record_t *rec, int full)
{
    char *tags = adm_prop_cell(rec, RMQ_PROP_TAGS, BODY_SHOWN_MAX);
    char *keys = adm_prop_cell(rec, RMQ_PROP_KEYS, BODY_SHOWN_MAX);
    char *props = props_string(rec->properties, rec->properties_len);
    char *props_cell = props ? adm_cell_escape((const uint8_t *)props, strlen(props), RMQ_PROPS_MAX) : NULL;
    char *topic = adm_cell_escape((const uint8_t *)rec->topic, rec->topic_len, RMQ_TOPIC_MAX);
    char qid[16], qoff[24], poff[24], born[64], store[64], bhost[RMQ_HOST_TEXT_MAX], shost[RMQ_HOST_TEXT_MAX], rt[16], flag[16], size[16];
    adm_table_t t;

    if (!props_cell) {
        fprintf(stderr, "mqadmin: out of memory\n");
        exit(1);
    }
    snprintf(qid, sizeof qid, "%d", rec->queue_id);
    snprintf(qoff, sizeof qoff, "%" PRId64, rec->queue_offset);
    snprintf(poff, sizeof poff, "%" PRId64, rec->phys_offset);
    time_cell(rec->born_timestamp, born, sizeof born);
    time_cell(rec->store_timestamp, store, sizeof store);
    rmq_record_host_text(rec, 0, bhost, sizeof bhost);
    rmq_record_host_text(rec, 1, shost, sizeof shost);
    snprintf(rt, sizeof rt, "%d", rec->reconsume_times);
    snprintf(flag, sizeof flag, "%d", rec->sys_flag);
    snprintf(size, sizeof size, "%" PRIu32, rec->body_len);
    adm_table_init(&t, 2);
    adm_table_row(&t, "Msg Id:", id);
    adm_table_row(&t, "Topic:", topic);
    adm_table_row(&t, "Tags:", tags);
    adm_table_row(&t, "Keys:", keys);
    adm_table_row(&t, "Queue Id:", qid);
    adm_table_row(&t, "Queue Offset:", qoff);
    adm_table_row(&t, "Phys Offset:", poff);
    adm_table_row(&t, "Born Timestamp:", born);
    adm_table_row(&t, "Store Timestamp:", store);
    adm_table_row(&t, "Born Host:", bhost);
    adm_table_row(&t, "Store Host:", shost);
    adm_table_row(&t, "Reconsume Times:", rt);
    adm_table_row(&t, "Sys Flag:", flag);
    adm_table_row(&t, "Properties:", props_cell[0] ? props_cell : "-");
    adm_table_row(&t, "Body Size:", size);
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    print_body(rec->body, rec->body_len, full);
    free(tags);
    free(keys);
    free(props);
    free(props_cell);
    free(topic);
}

int adm_cmd_query_msg_by_id(adm_ctx_t *ctx)
{
    const char *id = adm_opt(ctx, 'i');
    Rmq__ViewMessageRequest vm = RMQ__VIEW_MESSAGE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    rmq_record_t rec;
    char addr[64];
    int64_t offset;
    rmq_err_t err;

    if (adm_opt(ctx, 't')) {
        /* with a topic, the id may be the producer's unique id (UNIQ_KEY): the key index first */
        int found = adm_query_by_uniq(ctx, adm_opt(ctx, 't'), id, adm_opt(ctx, ADM_OPT_FULL) != NULL);
        if (found > 0)
            return 0;
        if (rmq_msg_id_parse(id, addr, sizeof addr, &offset) != RMQ_OK) {
            fprintf(stderr, "mqadmin: %s: no message of topic %s has unique id %s\n", ctx->cmd, adm_opt(ctx, 't'), id);
            return 1;
        }
    }
    if (rmq_msg_id_parse(id, addr, sizeof addr, &offset) != RMQ_OK) {
        fprintf(stderr, "mqadmin: %s: '%s' is not a message id (32 or 56 hex digits: IPv4 or IPv6 store host, port, offset)\n", ctx->cmd, id);
        return 1;
    }
    vm.offset = offset;
    req.code = RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID;
    req.header_case = RMQ__COMMAND__HEADER_VIEW_MESSAGE;
    req.view_message = &vm;
    if (adm_broker_call(ctx, addr, &req, NULL, 0, 0, NULL, &resp) != 0)
        return 1;
    size_t len = evbuffer_get_length(resp.body);
    const uint8_t *data = evbuffer_pullup(resp.body, (ssize_t)len);
    err = rmq_record_decode(data, len, 1, &rec);
    if (err == RMQ_OK)
        adm_print_record(id, &rec, adm_opt(ctx, ADM_OPT_FULL) != NULL);
    else
        fprintf(stderr, "mqadmin: %s: broker %s: the record at offset %" PRId64 " does not decode: %s\n", ctx->cmd,
                addr, offset, rmq_strerror(err));
    rmq_frame_clear(&resp);
    return err == RMQ_OK ? 0 : 1;
}
