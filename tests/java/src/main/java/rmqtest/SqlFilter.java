/* SqlFilter: RocketMQ's SQL92 message filters with the unmodified 4.9
 * client. Sends a table of messages whose user properties and tags are
 * chosen against each expression (missing properties, values that are no
 * number, numbers against strings), then for each expression, all at once,
 * a push consumer subscribed with MessageSelector.bySql and a lite pull
 * consumer subscribed with it receive exactly the expected bodies
 * ("OK sql92-push-N ..." / "OK sql92-lite-N ..." or "FAIL ..."), the
 * messages they received came from exactly the expected brokers
 * ("OK sql92-brokers ..."), and a consumer with a malformed expression fails
 * to start with the broker's error naming its position
 * ("OK sql92-malformed ...").
 * Args: namesrv topic brokers (the expected broker names, comma-separated). */
package rmqtest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
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

    /* How long the consumers may take to receive what they expect, and how
     * long they go on after that for anything that should not come. */
    private static final long RECEIVE_MS = 30000;
    private static final long LINGER_MS = 3000;
    /* Route look-ups at start fail the start past this; the test machines are loaded. */
    private static final int CLIENT_API_TIMEOUT_MS = 15000;
    /* A consumer's route look-up lost at its start (RouteRetry) is redone this soon. */
    private static final int POLL_NAME_SERVER_MS = 1000;

    /* The brokers any consumer received a message from. */
    private static final Set<String> BROKERS = new ConcurrentSkipListSet<>();

    public static void main(String[] args) {
        try {
            run(args[0], args[1], new TreeSet<>(Arrays.asList(args[2].split(","))));
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);   /* the client's worker threads are not daemons */
    }

    /* The checks on topic of the name server ns whose messages the brokers hold. */
    private static void run(String ns, String topic, Set<String> brokers) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("sql92_pg");
        p.setNamesrvAddr(ns);
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.setSendMsgTimeout(CLIENT_API_TIMEOUT_MS);
        p.start();
        for (String[] m : MESSAGES) {
            Message msg = new Message(topic, m[1], m[0].getBytes("UTF-8"));
            for (int i = 2; i < m.length; i++) {
                String[] kv = m[i].split("=", 2);
                msg.putUserProperty(kv[0], kv[1]);
            }
            RouteRetry.send(p, msg);
        }
        p.shutdown();
        List<Probe> probes = new ArrayList<>();
        for (int i = 0; i < EXPRESSIONS.length; i++) {
            probes.add(push(ns, topic, i));
            probes.add(lite(ns, topic, i));
        }
        receive(probes);
        for (Probe pr : probes) {
            pr.report();
        }
        System.out.println((BROKERS.equals(brokers) ? "OK " : "FAIL ") + "sql92-brokers the consumers received from "
            + BROKERS + ", expected " + brokers);
        malformed(ns, topic);
    }

    /* One consumer of expression i: what it should and did receive. */
    private static final class Probe {
        final String name;
        final String expression;
        final Set<String> want = new TreeSet<>();
        final Set<String> got = new ConcurrentSkipListSet<>();
        DefaultMQPushConsumer push;
        DefaultLitePullConsumer lite;

        Probe(String kind, int i) {
            String[] e = EXPRESSIONS[i];
            name = "sql92-" + kind + "-" + i;
            expression = e[0];
            want.addAll(Arrays.asList(e).subList(1, e.length));
        }

        void add(MessageExt m) {
            got.add(new String(m.getBody()));
            BROKERS.add(String.valueOf(m.getBrokerName()));
        }

        void report() {
            String line = name + " " + expression + ": got " + got + " want " + want;
            System.out.println((got.equals(want) ? "OK " : "FAIL ") + line);
        }
    }

    /* A started push consumer of expression i. */
    private static Probe push(String ns, String topic, int i) throws Exception {
        Probe pr = new Probe("push", i);
        pr.push = PushUntil.consumer(ns, "sql92_cg_" + i, "sql92_" + i);
        pr.push.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        pr.push.setPollNameServerInterval(POLL_NAME_SERVER_MS);
        pr.push.subscribe(topic, MessageSelector.bySql(pr.expression));
        pr.push.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(pr::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        pr.push.start();
        return pr;
    }

    /* A started lite pull consumer of expression i, from the first offset. */
    private static Probe lite(String ns, String topic, int i) throws Exception {
        Probe pr = new Probe("lite", i);
        pr.lite = new DefaultLitePullConsumer("sql92_lite_cg_" + i);
        pr.lite.setNamesrvAddr(ns);
        pr.lite.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        pr.lite.setPollNameServerInterval(POLL_NAME_SERVER_MS);
        pr.lite.setInstanceName("sql92_lite_" + i);
        pr.lite.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        pr.lite.subscribe(topic, MessageSelector.bySql(pr.expression));
        pr.lite.start();
        return pr;
    }

    /* Polls the lite pull consumers until every consumer has what it
     * expects or RECEIVE_MS passed, then LINGER_MS longer; shuts all down. */
    private static void receive(List<Probe> probes) {
        long until = System.currentTimeMillis() + RECEIVE_MS;
        boolean lingering = false;
        while (System.currentTimeMillis() < until) {
            boolean all = true;
            for (Probe pr : probes) {
                if (pr.lite != null) {
                    pr.lite.poll(100).forEach(pr::add);
                }
                all &= pr.got.size() >= pr.want.size();
            }
            if (all && !lingering) {
                lingering = true;
                until = System.currentTimeMillis() + LINGER_MS;
            }
        }
        for (Probe pr : probes) {
            if (pr.push != null) {
                pr.push.shutdown();
            } else {
                pr.lite.shutdown();
            }
        }
    }

    /* A malformed expression: start() fails with the position. */
    private static void malformed(String ns, String topic) throws Exception {
        DefaultMQPushConsumer c = PushUntil.consumer(ns, "sql92_cg_bad", "sql92_bad");
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
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
