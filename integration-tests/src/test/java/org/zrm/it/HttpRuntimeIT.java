package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import javax.inject.Inject;

import jakarta.servlet.Servlet;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.metatype.AttributeDefinition;
import org.osgi.service.metatype.MetaTypeInformation;
import org.osgi.service.metatype.MetaTypeService;
import org.osgi.service.metatype.ObjectClassDefinition;

/**
 * The runtime's HTTP side: WebSocket endpoints published on the HTTP Whiteboard work on the
 * embedded Jetty 12 (what the change streamer needs), and components describe their
 * configuration through Metatype.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HttpRuntimeIT {

    @Inject
    private BundleContext context;

    @Inject
    private MetaTypeService metaType;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.options(Files.createTempDirectory("zrm-it-http-"));
    }

    @Test
    public void webSocketEndpointOnTheWhiteboardEchoes() throws Exception {
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("osgi.http.whiteboard.servlet.pattern", "/it/echo");
        ServiceRegistration<Servlet> registration = context.registerService(Servlet.class, new EchoServlet(), properties);
        try {
            CompletableFuture<String> reply = new CompletableFuture<>();
            WebSocket.Listener listener = new WebSocket.Listener() {
                @Override
                public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
                    reply.complete(data.toString());
                    return null;
                }

                @Override
                public void onError(WebSocket socket, Throwable error) {
                    reply.completeExceptionally(error);
                }
            };
            URI uri = URI.create("ws://127.0.0.1:" + context.getProperty(ZrmRuntimeOptions.HTTP_PORT) + "/it/echo");
            WebSocket socket = HttpClient.newHttpClient().newWebSocketBuilder().buildAsync(uri, listener)
                    .get(30, TimeUnit.SECONDS);
            socket.sendText("hello", true).get(30, TimeUnit.SECONDS);
            assertEquals("echo:hello", reply.get(30, TimeUnit.SECONDS));
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(30, TimeUnit.SECONDS);
        } finally {
            registration.unregister();
        }
    }

    @Test
    public void adminConfigurationIsDescribedByMetatype() {
        Bundle admin = Bundles.named(context, "org.zrm.admin");
        MetaTypeInformation information = metaType.getMetaTypeInformation(admin);
        assertNotNull(information);
        assertTrue(Arrays.asList(information.getPids()).contains("org.zrm.admin"));
        ObjectClassDefinition ocd = information.getObjectClassDefinition("org.zrm.admin", null);
        List<String> attributes = Arrays.stream(ocd.getAttributeDefinitions(ObjectClassDefinition.ALL))
                .map(AttributeDefinition::getID).toList();
        assertTrue(attributes.toString(), attributes.containsAll(List.of("deployDir", "deployPollMillis")));
    }
}
