package chromium

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"gtrace/internal/testutils"
)

// Page is a page open in a headless Chromium.
type Page struct {
	tb     testing.TB
	conn   *websocket.Conn
	nextID int
}

// listening is the line Chromium prints once its debugging port is open.
var listening = regexp.MustCompile(`DevTools listening on ws://([^/]+)/`)

// Open starts Chromium on url, width by height pixels, and connects to
// its page; both end with tb. It skips tb when Chromium is not
// installed (Debian's chromium).
func Open(tb testing.TB, url string, width, height int) *Page {
	tb.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testutils.Skip(tb, "chromium is not installed (Debian: chromium)")
	}
	// Tests run as root, where Chromium's sandbox cannot start: it needs
	// --no-sandbox, and --headless as there is no display. Port 0 lets
	// it pick a free port, which it prints; --remote-allow-origins lets
	// the websocket client, which sends an Origin, connect.
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+tb.TempDir(), "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--remote-allow-origins=*", fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	// Chromium's own processes are in its group: all end with it, before
	// its data directory is removed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start chromium: %v", err)
	}
	tb.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var host string
	select {
	case host = <-addr:
	case <-time.After(30 * time.Second):
		tb.Fatal("chromium did not open its debugging port within 30s")
	}
	p := &Page{tb: tb, conn: dialPage(tb, host)}
	tb.Cleanup(func() { p.conn.Close() })
	p.Call("Page.navigate", map[string]any{"url": url}, nil)
	p.waitLoaded(url)
	return p
}

// dialPage connects to the websocket of Chromium's page.
func dialPage(tb testing.TB, host string) *websocket.Conn {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var targets []struct{ Type, URL, WebSocketDebuggerURL string }
		resp, err := http.Get("http://" + host + "/json/list")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		for _, t := range targets {
			if t.Type == "page" {
				conn, err := websocket.Dial(t.WebSocketDebuggerURL, "", "http://"+host)
				if err != nil {
					tb.Fatalf("connect to the page: %v", err)
				}
				return conn
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatal("chromium shows no page")
	return nil
}

// waitLoaded waits until the page has loaded url.
func (p *Page) waitLoaded(url string) {
	deadline := time.Now().Add(30 * time.Second)
	for p.Eval(`document.URL + " " + document.readyState`) != url+" complete" {
		if time.Now().After(deadline) {
			p.tb.Fatal("the page did not load within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Call sends a command and decodes its result into result, if not nil.
func (p *Page) Call(method string, params any, result any) {
	p.tb.Helper()
	p.nextID++
	id := p.nextID
	if err := websocket.JSON.Send(p.conn, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		p.tb.Fatalf("%s: %v", method, err)
	}
	p.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var msg struct {
			ID     int
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := websocket.JSON.Receive(p.conn, &msg); err != nil {
			p.tb.Fatalf("%s: %v", method, err)
		}
		if msg.ID != id {
			continue // an event
		}
		if msg.Error != nil {
			p.tb.Fatalf("%s: %s", method, msg.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(msg.Result, result); err != nil {
				p.tb.Fatalf("%s: %v", method, err)
			}
		}
		return
	}
}

// Eval runs a JavaScript expression in the page and returns its value.
func (p *Page) Eval(expr string) any {
	p.tb.Helper()
	var r struct {
		Result           struct{ Value any }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	p.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		p.tb.Fatalf("%s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	return r.Result.Value
}

// Mouse moves the mouse to x, y; with click, it clicks there too.
func (p *Page) Mouse(x, y float64, click bool) {
	p.tb.Helper()
	events := []string{"mouseMoved"}
	if click {
		events = append(events, "mousePressed", "mouseReleased")
	}
	for _, typ := range events {
		p.Call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil)
	}
}

// Type types text where the focus is.
func (p *Page) Type(text string) {
	p.tb.Helper()
	p.Call("Input.insertText", map[string]any{"text": text}, nil)
}

// Screenshot writes a PNG of the page to w.
func (p *Page) Screenshot(w io.Writer) {
	p.tb.Helper()
	var r struct{ Data string }
	p.Call("Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		p.tb.Fatalf("screenshot: %v", err)
	}
	if _, err := w.Write(png); err != nil {
		p.tb.Fatalf("screenshot: %v", err)
	}
}

// Quote makes s a JavaScript string literal.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
