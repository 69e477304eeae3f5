/* BenchSend: sync sends from the unmodified RocketMQ 4.9 Java producer, for
 * measuring the broker's CPU per message over remoting (the native figure
 * is scripts/cpu-per-msg.sh's default, with mqbench; `--client java` runs this):
 *   BenchSend NS TOPIC THREADS TOTAL SIZE
 * THREADS threads share one producer and send TOTAL messages of SIZE bytes
 * in all; prints "ACKED <n>" (SEND_OK answers) and "FAILED <n>". */
package rmqtest;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

public final class BenchSend {
    private BenchSend() {
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String topic = args[1];
        int threads = Integer.parseInt(args[2]);
        long total = Long.parseLong(args[3]);
        byte[] body = new byte[Integer.parseInt(args[4])];
        DefaultMQProducer p = new DefaultMQProducer("rmq_bench_producer");
        p.setNamesrvAddr(ns);
        p.setSendMsgTimeout(10000);
        p.start();
        AtomicLong next = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                while (next.getAndIncrement() < total) {
                    try {
                        if (p.send(new Message(topic, body)).getSendStatus() == SendStatus.SEND_OK) {
                            acked.incrementAndGet();
                        } else {
                            failed.incrementAndGet();
                        }
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
        System.out.println("ACKED " + acked.get());
        System.out.println("FAILED " + failed.get());
        p.shutdown();
        System.exit(0);
    }
}
