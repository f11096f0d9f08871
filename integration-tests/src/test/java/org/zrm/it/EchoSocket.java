package org.zrm.it;

import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.annotations.OnWebSocketMessage;
import org.eclipse.jetty.websocket.api.annotations.WebSocket;

/** Server side of the WebSocket smoke test: answers every text frame with {@code echo:<text>}. */
@WebSocket
public class EchoSocket {
    @OnWebSocketMessage
    public void onText(Session session, String text) {
        session.sendText("echo:" + text, Callback.NOOP);
    }
}
