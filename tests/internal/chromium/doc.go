// Package chromium drives a headless Chromium from tests through the
// Chrome DevTools Protocol: a page is opened, scripts run in it, the
// mouse and keyboard act on it, and screenshots are taken, over the
// page's remote-debugging websocket.
//
// The client is the protocol's minimum: a command is a JSON message
// with an id, answered by a message with the same id; events in
// between are read and dropped, as no test asks for them.
package chromium
