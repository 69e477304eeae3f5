package rmqtest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;

/**
 * The transport of the unmodified RocketMQ 5 Java client (rocketmq-client-java,
 * gRPC) against rmq, over h2c or over TLS (the client's default: ALPN h2,
 * any certificate), once per access point (the name server, a broker): a
 * body of the broker's maxMessageSize, 4 MiB (its request is over the 4 MiB
 * stream window the broker grants, so it needs window updates), sent and
 * received byte-exact, one of 4 MiB + 1 refused (the client checks the
 * max_body_size of the Settings the broker sent), and 200 sends in flight at
 * once on the client's one connection (200 concurrent HTTP/2 streams), each
 * acknowledged and received by a SimpleConsumer. Prints "OK name ..." or
 * "FAIL name ..." per check for run_grpc_produce_test.sh.
 *
 * usage: GrpcTransport h2c|tls PREFIX NAME=ENDPOINTS...   (topic PREFIX_NAME, group PREFIX_NAME_g)
 */
public final class GrpcTransport {
    static final int MAX_MESSAGE_SIZE = 4 << 20, BIG = MAX_MESSAGE_SIZE, IN_FLIGHT = 200;

    static boolean allOk = true;

    static void report(boolean ok, String name, String what) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + what);
        allOk &= ok;
    }

    public static void main(String[] args) throws Exception {
        boolean tls = args[0].equals("tls");
        String prefix = args[1];
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        for (int i = 2; i < args.length; i++) {
            String[] nameAndEndpoints = args[i].split("=", 2);
            String name = nameAndEndpoints[0], topic = prefix + "_" + name;
            ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(nameAndEndpoints[1])
                .enableSsl(tls).setRequestTimeout(Duration.ofSeconds(10)).build();
            accessPoint(provider, cfg, name, topic, topic + "_g");
        }
        System.exit(allOk ? 0 : 1);
    }

    /** The checks through one access point; the check names end in -NAME. */
    static void accessPoint(ClientServiceProvider p, ClientConfiguration cfg, String name, String topic,
                            String group) throws Exception {
        byte[] big = new byte[BIG];
        new Random(name.hashCode()).nextBytes(big);
        Set<String> burst = new HashSet<>();
        try (SimpleConsumer consumer = p.newSimpleConsumerBuilder().setClientConfiguration(cfg)
                 .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(2))
                 .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL)).build();
             Producer producer = p.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build()) {
            report(true, "start-" + name, "producer and SimpleConsumer started");
            String bigId = producer.send(p.newMessageBuilder().setTopic(topic).setBody(big).build())
                .getMessageId().toString();
            report(true, "send-big-" + name, "a body of " + BIG + " bytes sent: " + bigId);
            overLimit(p, producer, topic, name);
            List<CompletableFuture<SendReceipt>> inFlight = new ArrayList<>();
            for (int i = 0; i < IN_FLIGHT; i++) {
                String body = name + "-burst-" + i;
                burst.add(body);
                inFlight.add(producer.sendAsync(p.newMessageBuilder().setTopic(topic)
                    .setBody(body.getBytes(StandardCharsets.UTF_8)).build()));
            }
            Set<String> ids = new HashSet<>();
            for (CompletableFuture<SendReceipt> f : inFlight) {
                try {
                    ids.add(f.get(30, TimeUnit.SECONDS).getMessageId().toString());
                } catch (Exception e) {
                    System.out.println("# async send: " + e);
                }
            }
            report(ids.size() == IN_FLIGHT, "send-burst-" + name,
                   ids.size() + "/" + IN_FLIGHT + " sends in flight at once acknowledged with distinct ids");
            receiveAll(consumer, name, big, burst);
        }
    }

    /** A body over maxMessageSize: refused with the limit named. */
    static void overLimit(ClientServiceProvider p, Producer producer, String topic, String name) {
        String refused = "not refused";
        try {
            producer.send(p.newMessageBuilder().setTopic(topic).setBody(new byte[MAX_MESSAGE_SIZE + 1]).build());
        } catch (Exception e) {
            refused = e.getMessage();
        }
        report(refused != null && refused.contains(String.valueOf(MAX_MESSAGE_SIZE)), "refuse-over-" + name,
               "a body of " + (MAX_MESSAGE_SIZE + 1) + " bytes: " + refused);
    }

    /** Receives (and acks, all of a batch at once) until the big body and every burst body came, or 30 s. */
    static void receiveAll(SimpleConsumer consumer, String name, byte[] big, Set<String> burst) throws Exception {
        Set<String> got = new HashSet<>();
        boolean bigExact = false;
        int bigCount = 0;
        long until = System.currentTimeMillis() + 30000;
        while ((bigCount == 0 || !got.containsAll(burst)) && System.currentTimeMillis() < until) {
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            for (MessageView v : consumer.receive(32, Duration.ofSeconds(15))) {
                ByteBuffer b = v.getBody();
                byte[] body = new byte[b.remaining()];
                b.get(body);
                if (body.length > 1024) {
                    bigCount++;
                    bigExact = Arrays.equals(body, big);
                } else {
                    got.add(new String(body, StandardCharsets.UTF_8));
                }
                acks.add(consumer.ackAsync(v));
            }
            CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        }
        report(bigCount == 1 && bigExact, "receive-big-" + name,
               "the body of " + BIG + " bytes received " + bigCount + " time(s), byte-exact: " + bigExact);
        got.retainAll(burst);
        report(got.size() == IN_FLIGHT, "receive-burst-" + name,
               got.size() + "/" + IN_FLIGHT + " of the sends in flight received");
    }
}
