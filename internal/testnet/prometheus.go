package testnet

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
)

// StartPrometheus starts the Prometheus binary prometheus with config
// on a free loopback port, its data in dir, and returns the base
// address of its HTTP API. It stops when tb ends, printing its output
// if tb failed.
func StartPrometheus(tb testing.TB, prometheus, dir, config string) string {
	tb.Helper()
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	listen := FreeAddr(tb)
	var logs strings.Builder
	cmd := exec.Command(prometheus, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// Registered first, this runs after testutils.StartProcess' stop, when the
	// output is complete.
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("prometheus:\n%s", logs.String())
		}
	})
	testutils.StartProcess(tb, cmd, 20*time.Second)
	return "http://" + listen
}

// PrometheusQuery asks the Prometheus HTTP API at api once for the
// instant query q, and returns the values of the samples of a
// successful answer (none if it was not one) and the answer itself. The
// error is the request's.
func PrometheusQuery(api, q string) (values []string, answer string, err error) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var parsed struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.Unmarshal(body, &parsed); err != nil || parsed.Status != "success" {
		return nil, string(body), nil
	}
	for _, r := range parsed.Data.Result {
		v, _ := r.Value[1].(string)
		values = append(values, v)
	}
	return values, string(body), nil
}
