/* SqlFilter: RocketMQ's SQL92 message filters with the unmodified 4.9
 * client. Sends a table of messages whose user properties and tags are
 * chosen against each expression (missing properties, values that are no
 * number, numbers against strings), then for each expression a push
 * consumer subscribed with MessageSelector.bySql receives exactly the
 * expected bodies ("OK sql92-push-N ..." or "FAIL ..."), and a consumer
 * with a malformed expression fails to start with the broker's error
 * naming its position ("OK sql92-malformed ..."). */
package rmqtest;

import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class SqlFilter {
    private SqlFilter() {
    }

    /* body, tag, then name=value user properties */
    private static final String[][] MESSAGES = {
        {"m0", "TagA", "a=6", "s=x"},
        {"m1", "TagA", "a=5", "s=x"},
        {"m2", "TagB", "a=10", "s=y"},
        {"m3", "TagA", "s=x"},
        {"m4", "TagA", "a=abc", "s=x"},
        {"m5", "TagA", "a=7", "s=z"},
    };

    /* expression, then the bodies RocketMQ's semantics deliver */
    private static final String[][] EXPRESSIONS = {
        {"a > 5 AND s IN ('x', 'y')", "m0", "m2"},
        {"a IS NULL OR TAGS = 'TagB'", "m2", "m3"},
        {"a BETWEEN 5 AND 7 AND NOT (s = 'z')", "m0", "m1"},
        {"s <> 'x'", "m2", "m5"},
    };

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String topic = args[1];
        DefaultMQProducer p = new DefaultMQProducer("sql92_pg");
        p.setNamesrvAddr(ns);
        p.start();
        for (String[] m : MESSAGES) {
            Message msg = new Message(topic, m[1], m[0].getBytes("UTF-8"));
            for (int i = 2; i < m.length; i++) {
                String[] kv = m[i].split("=", 2);
                msg.putUserProperty(kv[0], kv[1]);
            }
            p.send(msg);
        }
        p.shutdown();
        for (int i = 0; i < EXPRESSIONS.length; i++) {
            consume(ns, topic, i);
        }
        malformed(ns, topic);
    }

    /* One push consumer of expression i; prints OK or FAIL. */
    private static void consume(String ns, String topic, int i) throws Exception {
        String[] e = EXPRESSIONS[i];
        Set<String> want = new TreeSet<>(Arrays.asList(e).subList(1, e.length));
        Set<String> got = new ConcurrentSkipListSet<>();
        DefaultMQPushConsumer c = PushUntil.consumer(ns, "sql92_cg_" + i, "sql92_" + i);
        c.subscribe(topic, MessageSelector.bySql(e[0]));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.add(new String(m.getBody()));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + 30000;
        while (got.size() < want.size() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(3000);   /* anything else that would arrive */
        c.shutdown();
        String line = "sql92-push-" + i + " " + e[0] + ": got " + got + " want " + want;
        System.out.println((got.equals(want) ? "OK " : "FAIL ") + line);
    }

    /* A malformed expression: start() fails with the position. */
    private static void malformed(String ns, String topic) throws Exception {
        DefaultMQPushConsumer c = PushUntil.consumer(ns, "sql92_cg_bad", "sql92_bad");
        c.subscribe(topic, MessageSelector.bySql("a > 5 AND"));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        try {
            c.start();
            System.out.println("FAIL sql92-malformed start() succeeded");
        } catch (MQClientException ex) {
            String all = ex.toString() + " " + (ex.getCause() != null ? ex.getCause().toString() : "");
            boolean ok = all.contains("column 10");
            System.out.println((ok ? "OK " : "FAIL ") + "sql92-malformed " + all.replace('\n', ' '));
        } finally {
            c.shutdown();
        }
    }
}
