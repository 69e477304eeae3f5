/* PushUntil: the push-consumer phase the test drivers share (Migration,
 * ProduceConsume): a consumer of a whole topic from its first offset,
 * run until it has seen N distinct messages or a time limit passed, then a
 * little longer for redeliveries, then a clean shutdown (offsets
 * committed) and "DONE <distinct>". Built with the 4.9 and the 5.x client. */
package rmqtest;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

final class PushUntil {
    private PushUntil() {
    }

    /* A push consumer of group on the name server ns, from the first
     * offset, committing offsets every second; not started. */
    static DefaultMQPushConsumer consumer(String ns, String group, String instance) {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName(instance);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPersistConsumerOffsetInterval(1000);
        return c;
    }

    /* Subscribes c to every tag of topic, hands each delivery to onMessage,
     * and returns once n distinct msgIds arrived or seconds passed, lingerMs
     * later, with c shut down and "DONE <distinct>" printed. */
    static void run(DefaultMQPushConsumer c, String topic, int n, int seconds, long lingerMs,
                    BiConsumer<MessageExt, ConsumeConcurrentlyContext> onMessage) throws Exception {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                onMessage.accept(m, ctx);
                seen.add(m.getMsgId());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        while (seen.size() < n && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(lingerMs);
        c.shutdown();
        System.out.println("DONE " + seen.size());
    }
}
