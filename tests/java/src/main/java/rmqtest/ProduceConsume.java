/* ProduceConsume: the unmodified RocketMQ 4.9 Java client's producer and
 * push consumer against an rmq name server and broker, for
 * tests/java/run_produce_consume_test.sh. One phase per run, so that a
 * consumer restart is a new process:
 *
 *   produce NS TOPIC N TAG  N sync sends (body "<TAG>-<i>"), a batch of 10
 *                           (body "<TAG>-batch-<i>") and, with TAG "first",
 *                           one message with tags, keys and user properties,
 *                           with TAG "second" one with TIMER_DELAY_MS 3000;
 *                           prints "SENT <uniqId> <status> <body>" per
 *                           message, "VIEW <body>" for the first message
 *                           read back by its offset msgId, "OFFSETID <id>".
 *   consume NS TOPIC GROUP N SECONDS
 *                           a push consumer (CONSUME_FROM_FIRST_OFFSET)
 *                           until N distinct messages arrived or SECONDS
 *                           passed, then a little longer to catch
 *                           redeliveries, then a clean shutdown (offsets
 *                           committed); prints "RECV <uniqId> <body>" per
 *                           delivery and "PROPS tags=.. keys=.. color=.. n=.."
 *                           for the message with user properties, "TIMER
 *                           delayed=<store - born ms>" for the timer one. */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;

public final class ProduceConsume {
    /* A name server call's timeout: the client's 3 s default can expire on a
     * loaded host before a cold JVM has its first connection active, and
     * the 5.x client then fails the send at once where 4.9 retries. */
    private static final int CLIENT_API_TIMEOUT_MS = 30000;
    /* A send's timeout, which covers the route look-up before the first one. */
    private static final int SEND_TIMEOUT_MS = 60000;
    /* The second round's timer message: RocketMQ 5's TIMER_DELAY_MS, as the
     * 5.x client's Message.setDelayTimeMs sets it. */
    private static final int TIMER_DELAY_MS = 3000;

    private ProduceConsume() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce")) {
            produce(args[1], args[2], Integer.parseInt(args[3]), args[4]);
        } else {
            consume(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        }
        System.exit(0);
    }

    private static void sent(SendResult r, String body) {
        System.out.println("SENT " + r.getMsgId() + " " + r.getSendStatus() + " " + body);
    }

    private static void produce(String ns, String topic, int n, String tag) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rmq_java_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("producer-" + tag);
        p.setSendMsgTimeout(SEND_TIMEOUT_MS);
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.start();
        String firstOffsetId = null;
        for (int i = 0; i < n; i++) {
            String body = tag + "-" + i;
            SendResult r = p.send(new Message(topic, "TagA", body.getBytes(StandardCharsets.UTF_8)));
            sent(r, body);
            if (firstOffsetId == null) {
                firstOffsetId = r.getOffsetMsgId();
            }
        }
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            batch.add(new Message(topic, "TagB", (tag + "-batch-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        SendResult br = p.send(batch);
        String[] ids = br.getMsgId().split(",");
        for (int i = 0; i < batch.size(); i++) {
            System.out.println("SENT " + ids[i] + " " + br.getSendStatus() + " " + tag + "-batch-" + i);
        }
        if (tag.equals("first")) {
            Message m = new Message(topic, "TagZ", "k1 k2", "props-body".getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("color", "blue");
            m.putUserProperty("n", "42");
            sent(p.send(m), "props-body");
        }
        if (tag.equals("second")) {
            Message m = new Message(topic, "TagT", ("timer-" + TIMER_DELAY_MS).getBytes(StandardCharsets.UTF_8));
            MessageAccessor.putProperty(m, "TIMER_DELAY_MS", String.valueOf(TIMER_DELAY_MS));   /* 5.x setDelayTimeMs */
            sent(p.send(m), "timer-" + TIMER_DELAY_MS);
        }
        System.out.println("OFFSETID " + firstOffsetId);
        MessageExt v = p.viewMessage(topic, firstOffsetId);   /* an offset msgId: viewed by offset (4.9 and 5.x) */
        System.out.println("VIEW " + new String(v.getBody(), StandardCharsets.UTF_8));
        p.shutdown();
    }

    private static void consume(String ns, String topic, String group, int n, int seconds) throws Exception {
        DefaultMQPushConsumer c = PushUntil.consumer(ns, group, "consumer-" + ProcessHandle.current().pid());
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        PushUntil.run(c, topic, n, seconds, 3000, (m, ctx) -> {
            String body = new String(m.getBody(), StandardCharsets.UTF_8);
            System.out.println("RECV " + m.getMsgId() + " " + body);
            if (body.startsWith("timer-")) {
                System.out.println("TIMER delayed=" + (m.getStoreTimestamp() - m.getBornTimestamp()));
            }
            if (body.equals("props-body")) {
                System.out.println("PROPS tags=" + m.getTags() + " keys=" + m.getKeys() + " color="
                    + m.getUserProperty("color") + " n=" + m.getUserProperty("n"));
            }
        });
    }
}
