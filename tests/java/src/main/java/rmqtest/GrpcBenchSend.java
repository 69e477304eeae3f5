/* GrpcBenchSend: sync sends from the unmodified RocketMQ 5 gRPC Java client
 * (rocketmq-client-java, profile grpc5), for measuring the broker's CPU per
 * message over gRPC (scripts/cpu-per-msg.sh --client grpc):
 *   GrpcBenchSend ENDPOINTS TOPIC THREADS TOTAL SIZE
 * THREADS threads share one producer and send TOTAL messages of SIZE bytes
 * in all; prints "ACKED <n>" (answered with a message id) and "FAILED <n>".
 * Requests may take 30 s (the client's default is 3 s): on a loaded machine,
 * or against a broker under valgrind, the producer's start-up calls took
 * longer and the run sent nothing. */
package rmqtest;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.producer.Producer;

public final class GrpcBenchSend {
    private GrpcBenchSend() {
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args[0];
        String topic = args[1];
        int threads = Integer.parseInt(args[2]);
        long total = Long.parseLong(args[3]);
        byte[] body = new byte[Integer.parseInt(args[4])];
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(30)).build();
        AtomicLong next = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        try (Producer p = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build()) {
            Thread[] ts = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                ts[i] = new Thread(() -> {
                    while (next.getAndIncrement() < total) {
                        try {
                            p.send(provider.newMessageBuilder().setTopic(topic).setBody(body).build());
                            acked.incrementAndGet();
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        }
                    }
                });
                ts[i].start();
            }
            for (Thread t : ts) {
                t.join();
            }
        }
        System.out.println("ACKED " + acked.get());
        System.out.println("FAILED " + failed.get());
        System.exit(0);
    }
}
