/* RouteRetry: a producer's send on a loaded test machine. A send whose
 * topic the producer has no route for yet looks it up under the client's
 * route lock, waiting 3 s for it (fixed); the start's first scheduled
 * look-up can hold the lock longer while the CPU-starved JVM connects to
 * the name server, and the send then fails with NOT_FOUND_TOPIC_EXCEPTION
 * ("No route info") without having sent anything. Built with the 4.9 and
 * the 5.x client. */
package rmqtest;

import org.apache.rocketmq.client.common.ClientErrorCode;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;

final class RouteRetry {
    private static final long RETRY_MS = 30000;

    private RouteRetry() {
    }

    /* p.send(msg), sent again every half second while it fails for want of
     * the topic's route, for up to RETRY_MS. */
    static SendResult send(DefaultMQProducer p, Message msg) throws Exception {
        long until = System.currentTimeMillis() + RETRY_MS;
        while (true) {
            try {
                return p.send(msg);
            } catch (MQClientException e) {
                if (e.getResponseCode() != ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION
                    || System.currentTimeMillis() > until) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }
}
