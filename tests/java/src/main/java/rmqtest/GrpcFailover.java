package rmqtest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.java.impl.producer.SendReceiptImpl;
import org.apache.rocketmq.client.java.message.MessageViewImpl;

/**
 * The unmodified RocketMQ 5 Java client (rocketmq-client-java 5.0.8, gRPC)
 * through the kill of a master, for run_grpc_failover_test.sh, ENDPOINTS its
 * access point (the name server):
 *
 * produce: a Producer sends one message every 10 ms until STOP_FILE exists
 * (or SECONDS pass) and prints "SENT id SEND_OK broker" per acknowledged
 * send and "FAIL n exception" per failed one, then "STOPPED".
 *
 * consume: a PushConsumer of GROUP prints "RECV id attempt" per delivery
 * (its listener succeeds) until every id of ACKED_FILE (written once the
 * producer stopped, one id a line) was delivered or SECONDS pass; its last
 * line counts the distinct ids, the duplicates, the redeliveries (delivery
 * attempt above 1) and the acknowledged ids missing. With HOLD_GROUP, a
 * SimpleConsumer of that group beside it receives with a 300 s invisible
 * time (nothing held expires during the test) and holds (never acks) up
 * to 20 messages of broker-a, "HELD id", until RESUMED_FILE exists
 * (broker-a's master restarted or its slave promoted); then it receives
 * and acks, "AGAIN id attempt ms" for each held one delivered again (ms
 * since RESUMED_FILE was seen), until every held id came again or 120 s
 * pass (the client refreshes its route every 30 s and receives from one
 * broker at a time), then "HOLD-DONE": popped-but-not-acked messages
 * survive the master, from the committed offset its restart or its slave
 * kept.
 *
 * Each role prints its last line before it closes its clients: a client's
 * close can wait two minutes (grpc-java's channel termination) for a
 * Telemetry stream the client reopened on a restarted broker after its
 * shutdown began, so the test reads these lines instead of waiting for the
 * JVM to exit.
 *
 * usage: GrpcFailover produce ENDPOINTS TOPIC SECONDS STOP_FILE
 *        GrpcFailover consume ENDPOINTS TOPIC GROUP ACKED_FILE SECONDS [HOLD_GROUP RESUMED_FILE]
 */
public final class GrpcFailover {
    /* generous: a JVM starting on a loaded machine can take seconds to make its first call */
    static ClientConfiguration config(String endpoints) {
        return ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
    }

    static synchronized void line(String s) {
        System.out.println(s);
        System.out.flush();
    }

    static void produce(String endpoints, String topic, long seconds, Path stop) throws Exception {
        ClientServiceProvider p = ClientServiceProvider.loadService();
        long until = System.currentTimeMillis() + seconds * 1000;
        try (Producer producer = p.newProducerBuilder().setClientConfiguration(config(endpoints))
                 .setTopics(topic).build()) {
            for (int i = 0; System.currentTimeMillis() < until && !Files.exists(stop); i++) {
                byte[] body = ("gf-" + i).getBytes(StandardCharsets.UTF_8);
                try {
                    SendReceipt r = producer.send(p.newMessageBuilder().setTopic(topic).setTag("F")
                        .setBody(body).build());
                    String broker = r instanceof SendReceiptImpl
                        ? ((SendReceiptImpl) r).getMessageQueue().getBroker().getName() : "?";
                    line("SENT " + r.getMessageId() + " SEND_OK " + broker);
                } catch (Exception e) {
                    line("FAIL " + i + " " + e.toString().replace('\n', ' '));
                }
                Thread.sleep(10);
            }
            line("STOPPED");
        }
    }

    static final int HOLD = 20;
    static final Duration HOLD_INVISIBLE = Duration.ofSeconds(300);

    static boolean fromBrokerA(MessageView v) {
        return v instanceof MessageViewImpl
            && ((MessageViewImpl) v).getMessageQueue().getBroker().getName().equals("broker-a");
    }

    /** Holds up to HOLD messages of broker-a until resumed exists, then acks what comes until each came again. */
    static void hold(String endpoints, String topic, String group, Path resumed) {
        Set<String> held = new HashSet<>(), again = new HashSet<>();
        try (SimpleConsumer c = ClientServiceProvider.loadService().newSimpleConsumerBuilder()
                 .setClientConfiguration(config(endpoints)).setConsumerGroup(group)
                 .setAwaitDuration(Duration.ofSeconds(2))
                 .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL)).build()) {
            while (!Files.exists(resumed)) {
                for (MessageView v : receive(c)) {
                    if (held.size() < HOLD && fromBrokerA(v) && held.add(v.getMessageId().toString()))
                        line("HELD " + v.getMessageId());
                    else
                        ack(c, v);
                }
            }
            long since = System.currentTimeMillis();
            while (!again.containsAll(held) && System.currentTimeMillis() < since + 120000) {
                for (MessageView v : receive(c)) {
                    String id = v.getMessageId().toString();
                    if (held.contains(id) && again.add(id))
                        line("AGAIN " + id + " " + v.getDeliveryAttempt() + " " + (System.currentTimeMillis() - since));
                    ack(c, v);
                }
            }
            line("HOLD-DONE");
        } catch (Exception e) {
            line("HOLD-ERROR " + e.toString().replace('\n', ' '));
        }
    }

    /** A batch, or none half a second after a failed receive (a broker down). */
    static List<MessageView> receive(SimpleConsumer c) throws InterruptedException {
        try {
            return c.receive(16, HOLD_INVISIBLE);
        } catch (Exception e) {
            Thread.sleep(500);
            return Collections.emptyList();
        }
    }

    static void ack(SimpleConsumer c, MessageView v) {
        try {
            c.ack(v);
        } catch (Exception e) {
            line("ACK-FAIL " + v.getMessageId() + " " + e.toString().replace('\n', ' '));
        }
    }

    static void consume(String endpoints, String topic, String group, Path ackedFile, long seconds)
        throws Exception {
        Set<String> got = ConcurrentHashMap.newKeySet();
        AtomicInteger dups = new AtomicInteger(), redelivered = new AtomicInteger();
        ClientServiceProvider p = ClientServiceProvider.loadService();
        long until = System.currentTimeMillis() + seconds * 1000;
        Set<String> acked = new HashSet<>();
        try (PushConsumer c = p.newPushConsumerBuilder().setClientConfiguration(config(endpoints))
                 .setConsumerGroup(group)
                 .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL))
                 .setMessageListener(v -> {
                     String id = v.getMessageId().toString();
                     line("RECV " + id + " " + v.getDeliveryAttempt());
                     dups.addAndGet(got.add(id) ? 0 : 1);
                     redelivered.addAndGet(v.getDeliveryAttempt() > 1 ? 1 : 0);
                     return ConsumeResult.SUCCESS;
                 }).build()) {
            while (System.currentTimeMillis() < until) {
                if (acked.isEmpty() && Files.exists(ackedFile))
                    acked.addAll(Files.readAllLines(ackedFile));
                if (!acked.isEmpty() && got.containsAll(acked))
                    break;
                Thread.sleep(200);
            }
            Set<String> missing = new HashSet<>(acked);
            missing.removeAll(got);
            line("DONE " + got.size() + " distinct ids received, " + dups.get() + " duplicates, "
                + redelivered.get() + " redeliveries, " + missing.size() + " of " + acked.size()
                + " acknowledged ids missing");
        }
    }

    public static void main(String[] args) throws Exception {
        Thread holder = null;
        if (args[0].equals("produce")) {
            produce(args[1], args[2], Long.parseLong(args[3]), Paths.get(args[4]));
        } else {
            if (args.length > 7) {
                holder = new Thread(() -> hold(args[1], args[2], args[6], Paths.get(args[7])));
                holder.start();
            }
            consume(args[1], args[2], args[3], Paths.get(args[4]), Long.parseLong(args[5]));
        }
        if (holder != null)
            holder.join();
        System.exit(0);
    }
}
