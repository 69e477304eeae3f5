/* Trace: message traces (enableMsgTrace) of the unmodified Java client,
 * built against the 4.9 client and, with -Procketmq5, the 5.x remoting
 * client:
 *   run NS TOPIC TRACE_TOPIC LABEL: a producer (group trace_pg) and a push
 *     consumer (group trace_cg), both created with enableMsgTrace and
 *     TRACE_TOPIC as their trace topic ("-": the client's default,
 *     RMQ_SYS_TRACE_TOPIC), send and consume one message with tag TagA and
 *     key trace-key-LABEL; then the trace records are looked up as
 *     RocketMQ's queryMsgTraceById does (QUERY_MESSAGE on the trace topic
 *     by the message id) and decoded with the client's TraceDataEncoder.
 *     Prints "MSGID <id>" and "OK|FAIL trace-pub-LABEL ...",
 *     "OK|FAIL trace-subbefore-LABEL ...", "OK|FAIL trace-subafter-LABEL ...". */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.trace.TraceBean;
import org.apache.rocketmq.client.trace.TraceContext;
import org.apache.rocketmq.client.trace.TraceDataEncoder;
import org.apache.rocketmq.client.trace.TraceType;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class Trace {
    private static final String DEFAULT_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC";
    private static final String PRODUCER_GROUP = "trace_pg";
    private static final String CONSUMER_GROUP = "trace_cg";
    private static final String TAG = "TagA";
    private static final long WAIT_MS = 60000;
    /* Route look-ups at start fail the start past this; the test machines are loaded. */
    private static final int CLIENT_API_TIMEOUT_MS = 15000;

    private Trace() {
    }

    public static void main(String[] args) throws Exception {
        String custom = "-".equals(args[2]) ? null : args[2];
        run(args[0], args[1], custom, args[3]);
        System.exit(0);
    }

    private static void run(String ns, String topic, String custom, String label) throws Exception {
        String key = "trace-key-" + label;
        CountDownLatch consumed = new CountDownLatch(1);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(CONSUMER_GROUP, true, custom);
        c.setNamesrvAddr(ns);
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, TAG);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                if (key.equals(m.getKeys()))
                    consumed.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        DefaultMQProducer p = new DefaultMQProducer(PRODUCER_GROUP, true, custom);
        p.setNamesrvAddr(ns);
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.start();
        SendResult r = RouteRetry.send(p, new Message(topic, TAG, key, ("traced " + label).getBytes(StandardCharsets.UTF_8)));
        String msgId = r.getMsgId();
        System.out.println("MSGID " + msgId);
        if (r.getSendStatus() != SendStatus.SEND_OK || !consumed.await(WAIT_MS, TimeUnit.MILLISECONDS)) {
            System.out.println("FAIL trace-pub-" + label + " the traced message was not sent and consumed: " + r);
            System.exit(1);
        }
        List<TraceContext> traces = awaitTraces(p, custom == null ? DEFAULT_TRACE_TOPIC : custom, msgId);
        check("trace-pub-" + label, find(traces, TraceType.Pub), PRODUCER_GROUP, topic, msgId, key);
        check("trace-subbefore-" + label, find(traces, TraceType.SubBefore), CONSUMER_GROUP, null, msgId, key);
        check("trace-subafter-" + label, find(traces, TraceType.SubAfter), CONSUMER_GROUP, null, msgId, key);
        c.shutdown();
        p.shutdown();
    }

    /* The trace records of msgId in traceTopic (QUERY_MESSAGE by key, as
     * QueryMsgTraceByIdSubCommand asks), waited for until Pub, SubBefore and
     * SubAfter are all there or WAIT_MS passed. */
    private static List<TraceContext> awaitTraces(DefaultMQProducer p, String traceTopic, String msgId)
        throws InterruptedException {
        long end = System.currentTimeMillis() + WAIT_MS;
        List<TraceContext> found = new ArrayList<>();
        while (System.currentTimeMillis() < end) {
            found = queryTraces(p, traceTopic, msgId);
            if (find(found, TraceType.Pub) != null && find(found, TraceType.SubBefore) != null
                && find(found, TraceType.SubAfter) != null)
                return found;
            Thread.sleep(500);
        }
        return found;
    }

    private static List<TraceContext> queryTraces(DefaultMQProducer p, String traceTopic, String msgId) {
        List<TraceContext> out = new ArrayList<>();
        try {
            QueryResult q = p.queryMessage(traceTopic, msgId, 64, 0, System.currentTimeMillis());
            for (MessageExt m : q.getMessageList())
                out.addAll(TraceDataEncoder.decoderFromTraceDataString(new String(m.getBody(), StandardCharsets.UTF_8)));
        } catch (Exception e) {
            System.out.println("# query " + traceTopic + " by " + msgId + ": " + e.getMessage());
        }
        return out;
    }

    private static TraceContext find(List<TraceContext> traces, TraceType type) {
        for (TraceContext t : traces)
            if (t.getTraceType() == type)
                return t;
        return null;
    }

    /* One verdict line: the record exists, is successful, names group and the
     * traced message's id and key; with topic (the Pub record, the only one
     * whose encoding carries them) also its topic and tag. */
    private static void check(String name, TraceContext t, String group, String topic, String msgId, String key) {
        if (t == null) {
            System.out.println("FAIL " + name + " no record");
            return;
        }
        TraceBean b = t.getTraceBeans().get(0);
        String seen = "group=" + t.getGroupName() + " success=" + t.isSuccess() + " topic=" + b.getTopic()
            + " msgId=" + b.getMsgId() + " tags=" + b.getTags() + " keys=" + b.getKeys();
        boolean ok = group.equals(t.getGroupName()) && t.isSuccess() && msgId.equals(b.getMsgId())
            && key.equals(b.getKeys()) && (topic == null || (topic.equals(b.getTopic()) && TAG.equals(b.getTags())));
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + seen);
    }
}
