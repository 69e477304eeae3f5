/* ns_hist.h: the console's last hour, in fixed memory. A ring of
 * NS_HIST_SLOTS slots, one per sampling period (consoleHistoryPeriodMs,
 * 10 s by default: 360 slots make the hour at the resolution of the
 * brokers' shortest rate window, where 60 one-minute slots would flatten a
 * burst of seconds into its minute), and per series two values a slot:
 * per broker address its put and get rates, per topic its put rate (summed
 * over the brokers that report it), per consumer group its lag (summed over
 * its broker sets). Each kind has a table of series allocated once; a new
 * series in a full table takes the place of the one with the least over
 * the hour (fewest messages, smallest lag), so memory does not grow with
 * the number of topics or groups. Loop thread only. */
#ifndef NS_HIST_H
#define NS_HIST_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#define NS_HIST_SLOTS 360
#define NS_HIST_NAME_MAX 255

typedef enum ns_hist_kind { NS_HIST_BROKER, NS_HIST_TOPIC, NS_HIST_GROUP, NS_HIST_KIND_COUNT } ns_hist_kind_t;

/* Series kept of each kind: broker addresses, topics, consumer groups. */
#define NS_HIST_BROKERS 64
#define NS_HIST_TOPICS 32
#define NS_HIST_GROUPS 32

typedef struct ns_hist ns_hist_t;

/* An empty history. Owner: caller (ns_hist_free). NULL when out of memory. */
ns_hist_t *ns_hist_new(void);
void ns_hist_free(ns_hist_t *h);

/* Opens the next slot, stamped wall_ms; the oldest is dropped once the ring
 * is full. Until the first tick nothing is recorded. */
void ns_hist_tick(ns_hist_t *h, int64_t wall_ms);

/* Adds (a, b) to series (kind, name) in the newest slot (a topic reported
 * by two brokers: their rates summed). A name too long for a series, or a
 * new one that has less than every kept series of a full table, is not
 * kept. */
void ns_hist_add(ns_hist_t *h, ns_hist_kind_t kind, const char *name, double a, double b);

/* 1 when series (kind, name) is kept. */
int ns_hist_kept(const ns_hist_t *h, ns_hist_kind_t kind, const char *name);

/* Series kept of kind. */
size_t ns_hist_count(const ns_hist_t *h, ns_hist_kind_t kind);

/* Calls fn(name, arg) for each series of kind, in table order. */
typedef void (*ns_hist_name_fn)(const char *name, void *arg);
void ns_hist_each(const ns_hist_t *h, ns_hist_kind_t kind, ns_hist_name_fn fn, void *arg);

/* Appends series (kind, name)'s sampled slots, oldest first, as a JSON
 * array [[wallMs,a,b],...] ([[wallMs,a],...] with one_value); [] when it
 * is not kept. */
void ns_hist_render(const ns_hist_t *h, ns_hist_kind_t kind, const char *name, int one_value,
                    struct evbuffer *out);

#endif
