package report_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/report"
)

// The plots of the report over the three runs with the documented
// command (--baseline v1 --fail-on 'response_p99 > +10%'), counted from
// what the page is made of: a CPU load plot for each of the 3 runs (each
// tells its 2 cores' states) and a trend for each of the 8 metrics whose
// values change from run to run in a way a plot can show (diagnostics,
// 0 in every run, has no relative change and no trend).
const documentedPlots = 3 + 8

// regressionHTML writes the report of the documented command.
func regressionHTML(t *testing.T, hists ...string) []byte {
	t.Helper()
	db, _, _ := regressionDB(t)
	opt := report.Options{Database: "runs.duckdb", Baseline: "v1", Thresholds: []report.Threshold{mustThreshold(t, "response_p99 > +10%")}}
	for _, h := range hists {
		spec, err := report.ParseHistSpec(h)
		if err != nil {
			t.Fatal(err)
		}
		opt.Hists = append(opt.Hists, spec)
	}
	rep, err := report.Build(context.Background(), db.SQL(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The page stands alone: no script, nothing to fetch; it says what
// crossed and draws the plots it should.
func TestHTMLSelfContained(t *testing.T) {
	page := string(regressionHTML(t, "response:"+slowTask))
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "url(", " src="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	// The only URL is the SVG namespace, a name that is never fetched.
	for _, u := range regexp.MustCompile(`https?://[^"' <>]*`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("the page refers to %s", u)
		}
	}
	if n := strings.Count(page, "<svg"); n != documentedPlots+1 {
		t.Errorf("%d plots, want %d and the histogram", n, documentedPlots)
	}
	for _, want := range []string{
		"<strong>1 value crossed a threshold</strong>",
		"<code>response_p99 &gt; &#43;10%</code>: response_p99 of <b>" + slowTask + "</b> in <a href=\"#run-3\">v3</a>",
		"Histogram of response of " + slowTask + " per run",
		// the key's column and the 3 runs'
		`<h3 id="metric-round_trip_p99">`, `<tr><td colspan="4" class="muted">no value in any run</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// chromium returns the browser, or skips the test without one (fails it
// on CI, where .ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (Debian: apt-get install chromium); the browser test is skipped")
	return ""
}

// runChromium runs headless Chromium with a fresh profile and no
// background network.
func runChromium(t *testing.T, browser string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out.Bytes()
}

// overflowProbe is a script for a test-only copy of the page (the page
// itself has none): once the page is laid out, it writes into the DOM the
// width of the document and of the window, and the elements that stick
// out on the right and are not inside something that scrolls or clips
// them (a wide table in its .scroll box is fine).
const overflowProbe = `<script>
(function () {
  var w = document.documentElement.clientWidth, out = [];
  function clipped(e) {
    for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") return true;
    }
    return false;
  }
  document.querySelectorAll("body *").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 0.5 && !clipped(e)) {
      out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.getAttribute("class") ? "." + e.getAttribute("class") : "") + " right=" + Math.round(r.right));
    }
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = "scrollWidth=" + document.documentElement.scrollWidth + " clientWidth=" + w + "\n" + out.slice(0, 20).join("\n");
  document.body.appendChild(pre);
})();
</script>`

// The widths the page is looked at: a desktop browser's and a narrow
// window's (a laptop's half screen). The screenshots of the report's
// documentation are these (-update writes them).
var browserWidths = []struct {
	width, height int
	doc           string
}{
	{1400, 1860, "../../docs/report-demo.png"},
	{800, 1700, "../../docs/report-800.png"},
}

// TestHTMLInBrowser opens the page in headless Chromium at each width:
// the DOM Chromium built holds every plot and the verdict, nothing sticks
// out on the right (no horizontal scrolling of the page: plots shrink to
// the width, wide tables scroll in their box), and the screenshot is not
// blank. With -update it keeps the screenshots in docs/.
func TestHTMLInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	html := regressionHTML(t, "response:"+slowTask)
	page := filepath.Join(dir, "r.html")
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	probed := filepath.Join(dir, "probed.html")
	if err := os.WriteFile(probed, bytes.Replace(html, []byte("</body>"), []byte(overflowProbe+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	probeRE := regexp.MustCompile(`(?s)<pre id="probe">scrollWidth=(\d+) clientWidth=(\d+)\n(.*?)</pre>`)

	for _, size := range browserWidths {
		t.Run(strconv.Itoa(size.width), func(t *testing.T) {
			window := fmt.Sprintf("--window-size=%d,%d", size.width, size.height)
			dom := string(runChromium(t, browser, window, "--dump-dom", "file://"+probed))
			if n := strings.Count(dom, "<svg"); n != documentedPlots+1 {
				t.Errorf("the DOM holds %d plots, want %d and the histogram", n, documentedPlots)
			}
			if !strings.Contains(dom, "1 value crossed a threshold") {
				t.Errorf("the DOM lacks the verdict:\n%.2000s", dom)
			}
			m := probeRE.FindStringSubmatch(dom)
			if m == nil {
				t.Fatalf("the probe wrote nothing:\n%.2000s", dom)
			}
			if m[2] != strconv.Itoa(size.width) {
				t.Errorf("the window is %s px wide, want %d", m[2], size.width)
			}
			if m[1] != m[2] || m[3] != "" {
				t.Errorf("the page is %s px wide in a window of %s: it scrolls sideways; what sticks out:\n%s", m[1], m[2], m[3])
			}

			shot := filepath.Join(dir, fmt.Sprintf("shot-%d.png", size.width))
			runChromium(t, browser, window, "--screenshot="+shot, "file://"+page)
			data, err := os.ReadFile(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			colours, inked := inkOf(img)
			b := img.Bounds()
			// The top of the page has text, tables, the red verdict, the
			// largest changes: far from blank.
			if b.Dx() != size.width || b.Dy() != size.height || colours < 100 || inked < b.Dx()*b.Dy()/50 {
				t.Errorf("screenshot %dx%d: %d colours, %d of %d pixels not white: blank?", b.Dx(), b.Dy(), colours, inked, b.Dx()*b.Dy())
			}
			t.Logf("screenshot: %d bytes, %d colours, %.1f%% of the pixels not white", len(data), colours, 100*float64(inked)/float64(b.Dx()*b.Dy()))
			if *dbtest.Update {
				if err := os.WriteFile(size.doc, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// inkOf counts an image's distinct colours and its pixels that are not
// white.
func inkOf(img image.Image) (colours, inked int) {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			seen[r<<16|g<<8|bl] = true
			if r < 250 || g < 250 || bl < 250 {
				inked++
			}
		}
	}
	return len(seen), inked
}
