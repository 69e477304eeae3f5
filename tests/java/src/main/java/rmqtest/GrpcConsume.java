package rmqtest;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * The unmodified RocketMQ 5 Java client (rocketmq-client-java 5.0.8, gRPC) as
 * a consumer against rmq, with ENDPOINTS as its access point: a
 * SimpleConsumer receives and acks every message sent (no duplicates), a
 * message whose invisible time it changes to 2 s and one it never acks come
 * again with delivery attempt 2 and are acked; a PushConsumer (QueryAssignment,
 * long-polling receives) consumes every message once, and one its listener
 * fails comes again with delivery attempt 2; a PushConsumer of an orderly
 * group (created over remoting with consumeMessageOrderly) consumes FIFO
 * messages of three message groups each in order. Messages are sent with the
 * 5.x Producer. Prints "OK name ..." or "FAIL name ..." per check for
 * run_grpc_consume_test.sh.
 *
 * usage: GrpcConsume ENDPOINTS SIMPLE_TOPIC PUSH_TOPIC PREFIX FIFO_TOPIC NAMESRV BROKER
 */
public final class GrpcConsume {
    static final int SIMPLE = 10, PUSH = 20;
    static final Duration INVISIBLE = Duration.ofSeconds(10);   /* the shortest a receive may ask */

    static boolean allOk = true;

    static void report(boolean ok, String name, String what) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + what);
        allOk &= ok;
    }

    static String body(MessageView v) {
        return StandardCharsets.UTF_8.decode(v.getBody()).toString();
    }

    static void send(ClientServiceProvider p, Producer producer, String topic, String body) throws Exception {
        producer.send(p.newMessageBuilder().setTopic(topic).setTag("TagA")
            .setBody(body.getBytes(StandardCharsets.UTF_8)).build());
    }

    /** Receives until one message with body comes (within seconds); it, or null. */
    static MessageView receiveOne(SimpleConsumer c, String body, Duration invisible, long seconds) throws Exception {
        long until = System.currentTimeMillis() + seconds * 1000;
        while (System.currentTimeMillis() < until) {
            for (MessageView v : c.receive(16, invisible)) {
                if (body.equals(body(v)))
                    return v;
                c.ack(v);
            }
        }
        return null;
    }

    static void simple(ClientServiceProvider p, ClientConfiguration cfg, Producer producer, String topic,
                       String prefix) throws Exception {
        try (SimpleConsumer c = p.newSimpleConsumerBuilder().setClientConfiguration(cfg)
                 .setConsumerGroup(prefix + "_simple").setAwaitDuration(Duration.ofSeconds(3))
                 .setSubscriptionExpressions(Collections.singletonMap(topic,
                     new FilterExpression("TagA", FilterExpressionType.TAG))).build()) {
            report(true, "simple-start", "SimpleConsumer started");
            Set<String> sent = new HashSet<>(), got = new HashSet<>();
            int dups = 0;
            for (int i = 0; i < SIMPLE; i++) {
                sent.add(prefix + "-s" + i);
                send(p, producer, topic, prefix + "-s" + i);
            }
            long until = System.currentTimeMillis() + 30000;
            while (got.size() < SIMPLE && System.currentTimeMillis() < until) {
                for (MessageView v : c.receive(16, INVISIBLE)) {
                    dups += got.add(body(v)) ? 0 : 1;
                    c.ack(v);
                }
            }
            report(got.equals(sent) && dups == 0, "simple-receive-ack",
                got.size() + "/" + SIMPLE + " received and acked, " + dups + " duplicates");

            send(p, producer, topic, prefix + "-change");
            MessageView v = receiveOne(c, prefix + "-change", INVISIBLE, 20);
            if (v != null)
                c.changeInvisibleDuration(v, Duration.ofSeconds(2));
            long changed = System.currentTimeMillis();
            MessageView again = v == null ? null : receiveOne(c, prefix + "-change", INVISIBLE, 20);
            report(again != null && again.getDeliveryAttempt() == 2, "simple-change-invisible",
                again == null ? "not received again" : "again after " + (System.currentTimeMillis() - changed)
                    + " ms, delivery attempt " + again.getDeliveryAttempt());
            if (again != null)
                c.ack(again);

            send(p, producer, topic, prefix + "-noack");
            v = receiveOne(c, prefix + "-noack", INVISIBLE, 20);
            long taken = System.currentTimeMillis();
            again = v == null ? null : receiveOne(c, prefix + "-noack", INVISIBLE, 30);
            long after = System.currentTimeMillis() - taken;
            report(again != null && again.getDeliveryAttempt() == 2 && after >= 9000, "simple-redelivered",
                again == null ? "not redelivered" : "redelivered after " + after + " ms, delivery attempt "
                    + again.getDeliveryAttempt());
            if (again != null)
                c.ack(again);
        }
    }

    static void push(ClientServiceProvider p, ClientConfiguration cfg, Producer producer, String topic,
                     String prefix) throws Exception {
        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        String failOnce = prefix + "-fail-once";
        try (PushConsumer c = p.newPushConsumerBuilder().setClientConfiguration(cfg)
                 .setConsumerGroup(prefix + "_push")
                 .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL))
                 .setMessageListener(v -> {
                     String b = body(v);
                     int n = seen.computeIfAbsent(b, k -> new AtomicInteger()).incrementAndGet();
                     attempts.put(b, v.getDeliveryAttempt());
                     return b.equals(failOnce) && n == 1 ? ConsumeResult.FAILURE : ConsumeResult.SUCCESS;
                 }).build()) {
            report(true, "push-start", "PushConsumer started");
            for (int i = 0; i < PUSH; i++)
                send(p, producer, topic, prefix + "-p" + i);
            send(p, producer, topic, failOnce);
            long until = System.currentTimeMillis() + 60000;
            while (System.currentTimeMillis() < until &&
                   (seen.size() < PUSH + 1 || seen.get(failOnce).get() < 2))
                Thread.sleep(200);
            Thread.sleep(1000);
            int once = 0;
            for (int i = 0; i < PUSH; i++) {
                AtomicInteger n = seen.get(prefix + "-p" + i);
                once += n != null && n.get() == 1 ? 1 : 0;
            }
            report(once == PUSH, "push-consume", once + "/" + PUSH + " consumed exactly once");
            AtomicInteger f = seen.get(failOnce);
            report(f != null && f.get() == 2 && attempts.get(failOnce) == 2, "push-failure-redelivered",
                "the failed message consumed " + (f == null ? 0 : f.get()) + " times, last delivery attempt "
                    + attempts.get(failOnce));
        }
    }

    /** Creates an orderly (consumeMessageOrderly) group on the broker at addr over remoting (code 200). */
    static void createOrderlyGroup(String namesrv, String addr, String group) throws Exception {
        ClientConfig cc = new ClientConfig();
        cc.setNamesrvAddr(namesrv);
        cc.setInstanceName("grpc-consume-admin");
        MQClientInstance mq = MQClientManager.getInstance().getOrCreateMQClientInstance(cc);
        mq.start();
        try {
            RemotingCommand req = RemotingCommand.createRequestCommand(200, null);
            req.setBody(("{\"groupName\":\"" + group + "\",\"consumeEnable\":true,\"consumeMessageOrderly\":true,"
                + "\"retryMaxTimes\":16,\"retryQueueNums\":1}").getBytes(StandardCharsets.UTF_8));
            RemotingCommand resp = mq.getMQClientAPIImpl().getRemotingClient().invokeSync(addr, req, 5000);
            if (resp.getCode() != 0)
                throw new IllegalStateException("group " + group + ": " + resp.getRemark());
        } finally {
            mq.shutdown();
        }
    }

    static void fifo(ClientServiceProvider p, ClientConfiguration cfg, Producer producer, String topic, String prefix)
        throws Exception {
        Map<String, List<String>> got = new ConcurrentHashMap<>();
        Map<String, List<String>> sent = new ConcurrentHashMap<>();
        try (PushConsumer c = p.newPushConsumerBuilder().setClientConfiguration(cfg)
                 .setConsumerGroup(prefix + "_fifo")
                 .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL))
                 .setMessageListener(v -> {
                     String mg = v.getMessageGroup().orElse("none");
                     got.computeIfAbsent(mg, k -> Collections.synchronizedList(new ArrayList<>())).add(body(v));
                     return ConsumeResult.SUCCESS;
                 }).build()) {
            for (int i = 0; i < 10; i++) {
                for (int g = 0; g < 3; g++) {
                    String mg = prefix + "-fg" + g, b = mg + "-" + i;
                    producer.send(p.newMessageBuilder().setTopic(topic).setMessageGroup(mg)
                        .setBody(b.getBytes(StandardCharsets.UTF_8)).build());
                    sent.computeIfAbsent(mg, k -> new ArrayList<>()).add(b);
                }
            }
            long until = System.currentTimeMillis() + 60000;
            while (System.currentTimeMillis() < until && !got.equals(sent))
                Thread.sleep(200);
            report(got.equals(sent), "push-fifo", "3 message groups x 10 consumed in order by an orderly group: "
                + (got.equals(sent) ? "yes" : got.toString()));
        }
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args[0], simpleTopic = args[1], pushTopic = args[2], prefix = args[3],
            fifoTopic = args[4], namesrv = args[5], broker = args[6];
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(5)).build();
        try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg)
                 .setTopics(simpleTopic, pushTopic, fifoTopic).build()) {
            simple(provider, cfg, producer, simpleTopic, prefix);
            push(provider, cfg, producer, pushTopic, prefix);
            createOrderlyGroup(namesrv, broker, prefix + "_fifo");
            fifo(provider, cfg, producer, fifoTopic, prefix);
        } catch (Exception e) {
            report(false, "run", e.toString());
        }
        System.exit(allOk ? 0 : 1);
    }
}
