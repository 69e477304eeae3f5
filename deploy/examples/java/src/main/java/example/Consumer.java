/* Consumer: a push consumer of GROUP on TOPIC (tag TagA) through NAMESRV;
 * prints each message it gets and stops after COUNT distinct ones or
 * SECONDS seconds.
 *
 *   java -cp ... example.Consumer NAMESRV TOPIC GROUP COUNT SECONDS */
package example;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

public final class Consumer {
    private Consumer() {
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[3]);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(count);
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2]);
        consumer.setNamesrvAddr(args[0]);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(args[1], "TagA");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                System.out.println("RECV " + m.getMsgId() + " " + m.getKeys() + " "
                        + new String(m.getBody(), StandardCharsets.UTF_8));
                if (seen.add(m.getMsgId())) {
                    done.countDown();
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        boolean all = done.await(Integer.parseInt(args[4]), TimeUnit.SECONDS);
        consumer.shutdown();
        System.out.println(all ? "DONE " + seen.size() : "TIMEOUT " + seen.size());
        System.exit(all ? 0 : 1);
    }
}
