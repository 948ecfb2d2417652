// Starts Amazon's DynamoDB Local bound to 127.0.0.1 only.
//
// DynamoDB Local 2.x has no bind-address option: its DynamoDBProxyServer builds
// a Jetty `new Server(port)`, which listens on every interface. We let its own
// ServerRunner parse the usual command line (-inMemory -port N ...), then set the
// host of the Jetty connector before starting it. Telemetry is never configured,
// so nothing is sent anywhere. Compiled and run by scripts/services/dynamo.sh.

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public final class LoopbackServerRunner {
    public static void main(String[] args) throws Exception {
        String host = System.getProperty("stepfold.dynamo.host", "127.0.0.1");
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);

        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server jetty = (Server) field.get(proxy);
        for (Connector connector : jetty.getConnectors()) {
            ((ServerConnector) connector).setHost(host);
        }

        proxy.start();
        System.out.println("LoopbackServerRunner: DynamoDB Local listening on " + host);
        proxy.join();
    }
}
