package serve

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// getRaw returns a GET's status, content type and body.
func getRaw(t *testing.T, url string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

func TestPNGDownloads(t *testing.T) {
	st, ids := fixtures(t)
	ts := newTestServer(t, st, Options{})
	id := ids[0]
	_, body := get(t, ts.URL+"/run/"+id)
	mustContain(t, "run page", body, `href="/run/`+id+`/png"`, `href="/download/png?run=`+id+`"`)

	code, body := get(t, ts.URL+"/run/"+id+"/png")
	if code != http.StatusOK {
		t.Fatalf("png list: %d %s", code, body)
	}
	mustContain(t, "png list", body, `href="/run/`+id+`/png/throughput.png"`, "latency.png", "all as a zip")

	code, ctype, data := getRaw(t, ts.URL+"/run/"+id+"/png/throughput.png")
	if code != http.StatusOK || ctype != "image/png" || !bytes.HasPrefix(data, pngMagic) {
		t.Errorf("throughput.png: %d %q, PNG header %v", code, ctype, bytes.HasPrefix(data, pngMagic))
	}
	for _, name := range []string{"nope.png", "..%2Fspec.json", "%3Cscript%3E.png"} {
		code, _, data := getRaw(t, ts.URL+"/run/"+id+"/png/"+name)
		if code != http.StatusNotFound {
			t.Errorf("unknown chart %s: %d, want 404", name, code)
		}
		if strings.Contains(string(data), "<script>") {
			t.Errorf("unknown chart %s: the name is echoed unescaped", name)
		}
	}
	if code, _, _ := getRaw(t, ts.URL+"/run/nope/png/throughput.png"); code != http.StatusNotFound {
		t.Errorf("chart of an unknown run: %d, want 404", code)
	}

	code, ctype, data = getRaw(t, ts.URL+"/download/png?run="+ids[0]+"&run="+ids[3])
	if code != http.StatusOK || ctype != "application/zip" {
		t.Fatalf("png zip: %d %q", code, ctype)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "throughput.png") || !strings.Contains(got, "tps-bars.png") {
		t.Errorf("png zip of two runs holds %s", got)
	}
}
