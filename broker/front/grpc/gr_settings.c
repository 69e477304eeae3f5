/* gr_settings.c: the Settings reply of a Telemetry stream (see
 * gr_settings.h), the way the proxy's GrpcClientSettingsManager merges the
 * server's fields into the client's settings. */
#include "gr_settings.h"

#include <string.h>

#include "gr_message.h"

#define CT(x) APACHE__ROCKETMQ__V2__CLIENT_TYPE__##x
#define SETTINGS(x) APACHE__ROCKETMQ__V2__SETTINGS__##x
#define SUB(x) APACHE__ROCKETMQ__V2__SUBSCRIPTION___##x
#define CODE(x) APACHE__ROCKETMQ__V2__CODE__##x

/* RocketMQ's default retryMaxTimes of a consumer group. */
#define DEFAULT_RETRY_MAX_TIMES 16

/* An exponential backoff: Java and Node both accept this strategy (Node
 * ignores a customized one). */
static void set_backoff(gr_settings_reply_t *out, int32_t max_attempts, int64_t initial_ms, int64_t max_ms)
{
    apache__rocketmq__v2__retry_policy__init(&out->backoff);
    apache__rocketmq__v2__exponential_backoff__init(&out->exponential);
    gr_duration_set_ms(&out->initial, initial_ms);
    gr_duration_set_ms(&out->max, max_ms);
    out->exponential.initial = &out->initial;
    out->exponential.max = &out->max;
    out->exponential.multiplier = 2;
    out->backoff.max_attempts = max_attempts;
    out->backoff.strategy_case = APACHE__ROCKETMQ__V2__RETRY_POLICY__STRATEGY_EXPONENTIAL_BACKOFF;
    out->backoff.exponential_backoff = &out->exponential;
    out->settings._backoff_policy_case = APACHE__ROCKETMQ__V2__SETTINGS___BACKOFF_POLICY_BACKOFF_POLICY;
    out->settings.backoff_policy = &out->backoff;
}

static int producer_reply(const Apache__Rocketmq__V2__Settings *client, const gr_settings_config_t *cfg,
                          gr_settings_reply_t *out, gr_status_t *st)
{
    int32_t attempts = cfg->producer_max_attempts;

    if (client->pub_sub_case != SETTINGS(PUB_SUB_PUBLISHING) || !client->publishing)
        return gr_status_set(st, CODE(BAD_REQUEST), "a producer's settings carry no publishing");
    if (client->_backoff_policy_case && client->backoff_policy && client->backoff_policy->max_attempts > 0)
        attempts = client->backoff_policy->max_attempts;
    set_backoff(out, attempts, 10, 1000);
    apache__rocketmq__v2__publishing__init(&out->publishing);
    out->publishing.n_topics = client->publishing->n_topics;
    out->publishing.topics = client->publishing->topics;
    out->publishing.max_body_size = cfg->max_body_size;
    out->publishing.validate_message_type = 0;      /* rmq's topics have no message type */
    out->settings.pub_sub_case = SETTINGS(PUB_SUB_PUBLISHING);
    out->settings.publishing = &out->publishing;
    return 1;
}

static int consumer_reply(const Apache__Rocketmq__V2__Settings *client, const gr_settings_config_t *cfg,
                          const gr_group_policy_t *group, gr_settings_reply_t *out, gr_status_t *st)
{
    const Apache__Rocketmq__V2__Subscription *sub = client->subscription;
    int32_t retries = group ? group->retry_max_times : DEFAULT_RETRY_MAX_TIMES;
    int64_t poll_ms = cfg->long_polling_max_ms;

    if (client->pub_sub_case != SETTINGS(PUB_SUB_SUBSCRIPTION) || !sub)
        return gr_status_set(st, CODE(BAD_REQUEST), "a consumer's settings carry no subscription");
    if (!sub->_group_case || !sub->group || !*sub->group->name)
        return gr_status_set(st, CODE(ILLEGAL_CONSUMER_GROUP), "a consumer's settings name no group");
    if (sub->_long_polling_timeout_case && sub->long_polling_timeout) {
        int64_t asked = gr_duration_ms(sub->long_polling_timeout);
        if (asked >= 0 && asked < poll_ms)
            poll_ms = asked;
    }
    set_backoff(out, retries + 1, 1000, 2 * 3600 * 1000);
    apache__rocketmq__v2__subscription__init(&out->subscription);
    out->subscription._group_case = SUB(GROUP_GROUP);
    out->subscription.group = sub->group;
    out->subscription.n_subscriptions = sub->n_subscriptions;
    out->subscription.subscriptions = sub->subscriptions;
    out->subscription._fifo_case = SUB(FIFO_FIFO);
    out->subscription.fifo = group && group->consume_orderly;
    out->subscription._receive_batch_size_case = SUB(RECEIVE_BATCH_SIZE_RECEIVE_BATCH_SIZE);
    out->subscription.receive_batch_size = cfg->receive_batch_size;
    gr_duration_set_ms(&out->long_polling, poll_ms);
    out->subscription._long_polling_timeout_case = SUB(LONG_POLLING_TIMEOUT_LONG_POLLING_TIMEOUT);
    out->subscription.long_polling_timeout = &out->long_polling;
    out->settings.pub_sub_case = SETTINGS(PUB_SUB_SUBSCRIPTION);
    out->settings.subscription = &out->subscription;
    return 1;
}

/* The client's own fields the reply echoes. */
static void echo_client(const Apache__Rocketmq__V2__Settings *client, gr_settings_reply_t *out)
{
    out->settings._client_type_case = client->_client_type_case;
    out->settings.client_type = client->client_type;
    out->settings._access_point_case = client->_access_point_case;
    out->settings.access_point = client->access_point;
    out->settings._request_timeout_case = client->_request_timeout_case;
    out->settings.request_timeout = client->request_timeout;
    out->settings.user_agent = client->user_agent;
    apache__rocketmq__v2__metric__init(&out->metric);
    out->settings.metric = &out->metric;
}

int gr_settings_reply(const Apache__Rocketmq__V2__Settings *client, const gr_settings_config_t *cfg,
                      const gr_group_policy_t *group, gr_settings_reply_t *out, gr_status_t *st)
{
    int ok;

    memset(out, 0, sizeof(*out));
    apache__rocketmq__v2__telemetry_command__init(&out->cmd);
    apache__rocketmq__v2__settings__init(&out->settings);
    if (!client->_client_type_case || client->client_type == CT(CLIENT_TYPE_UNSPECIFIED))
        return gr_status_set(st, CODE(UNRECOGNIZED_CLIENT_TYPE), "the settings name no client type");
    switch (client->client_type) {
    case CT(PRODUCER):
        ok = producer_reply(client, cfg, out, st);
        break;
    case CT(PUSH_CONSUMER):
    case CT(SIMPLE_CONSUMER):
        ok = consumer_reply(client, cfg, group, out, st);
        break;
    default:
        return gr_status_set(st, CODE(UNSUPPORTED), "client type %d is not supported", (int)client->client_type);
    }
    if (!ok)
        return 0;
    echo_client(client, out);
    gr_status_set(st, CODE(OK), "OK");
    apache__rocketmq__v2__status__init(&out->status);
    out->status.code = CODE(OK);
    out->status.message = (char *)"OK";
    out->cmd._status_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND___STATUS_STATUS;
    out->cmd.status = &out->status;
    out->cmd.command_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS;
    out->cmd.settings = &out->settings;
    return 1;
}
