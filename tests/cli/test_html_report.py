# SPDX-License-Identifier: MIT
"""The HTML reports in a real browser: headless Chromium loads the pages
of `run --format html`, `timing --format html` and `compare --format html`
and its DOM (--dump-dom) is checked against what the same runs say in
their machine formats (--events, timing/compare --format json): the
summary counts, the failures first with their messages, captured output
and rerun commands, the eager timelines of failures and the lazy ones of
passing cases, the plots, the refusal page's differing fields; and that
markup a kernel prints or returns as its message is text, never elements
(no script or img element, no onerror attribute beyond what the page
emits). Screenshots are kept in the build directory as artifacts.

Usage: test_html_report.py SCENETEST HOSTILE_PLUGIN SPIN1 SPIN2 OUTDIR
                           FIXTURE_LIB
Exit 0 all passed, 1 a failure, 77 skipped (no /usr/bin/chromium); the
test lines are TAP on stdout."""
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"
EXE = os.path.abspath(sys.argv[1])
HOSTILE = os.path.abspath(sys.argv[2])  # platform 'htmlhostile'
SPIN1 = os.path.abspath(sys.argv[3])    # platform 'spin': add once
SPIN2 = os.path.abspath(sys.argv[4])    # the same add twice over
OUTDIR = os.path.abspath(sys.argv[5])   # screenshots go here
FIXTURE = os.path.abspath(sys.argv[6])  # a shared object to load in run
TMP = tempfile.mkdtemp(prefix="scenetest-html-")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taptest  # noqa: E402  (after sys.path)
from taptest import Run, check, main, test  # noqa: E402

taptest.EXE = EXE

# What the hostile plugin's add returns as its message and prints (its
# source: tests/plugins/test_plugin_src.c, HTML_HOSTILE), as the page must
# show it: controls as Control Pictures, bad bytes as U+FFFD.
HOSTILE_TEXT = ("<script>document.title='INJECTED'</script></pre>"
                "<img src=x onerror=\"document.title='INJECTED'\">"
                "</textarea></details>]]><!-- &amp; 'q' ctl\u2401\u2421 "
                "bad\ufffd\ufffd\ufffd end")

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text()
                       for c in self.children)

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def find(self, tag=None, **attrs):
        """Descendants (self included) with this tag and these attribute
        values; cls= matches one class of the class attribute."""
        out = []
        for n in self.walk():
            if tag is not None and n.tag != tag:
                continue
            ok = True
            for k, v in attrs.items():
                if k == "cls":
                    ok = ok and v in n.attrs.get("class", "").split()
                elif n.attrs.get(k.replace("_", "-")) != v:
                    ok = False
            if ok:
                out.append(n)
        return out


class Tree(html.parser.HTMLParser):
    """The DOM Chromium serialised, as a tree (the serialiser closes every
    non-void element, SVG ones included)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def chromium(args):
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run",
            "--user-data-dir=" + tempfile.mkdtemp(dir=TMP)] + args


# Chromium takes seconds to start. Several at once on a small machine are
# slower than one after the other (4 pages: 19 s at once, 12 s in turn),
# so at most MAX_CHROMIUM run at a time; a check waits for its page.
MAX_CHROMIUM = 1
PENDING = {}
DOMS = {}


def start(key, args):
    running = [p for p, _ in PENDING.values() if p.poll() is None]
    if len(running) >= MAX_CHROMIUM:
        running[0].wait(timeout=120)
    if key not in PENDING:
        out = tempfile.TemporaryFile(dir=TMP)
        PENDING[key] = (subprocess.Popen(chromium(args), stdout=out,
                                         stderr=subprocess.DEVNULL), out)


def finish(key):
    p, out = PENDING[key]
    rc = p.wait(timeout=120)
    out.seek(0)
    return rc, out.read()


def start_dom(path, fragment=""):
    start(("dom", path, fragment),
          ["--dump-dom", "file://" + path + fragment])


def dom(path, fragment=""):
    """The DOM of path after its scripts ran, as a tree."""
    key = ("dom", path, fragment)
    if key not in DOMS:
        start_dom(path, fragment)
        rc, data = finish(key)
        check(rc == 0, "chromium --dump-dom %s%s: exit %d" %
              (path, fragment, rc))
        DOMS[key] = parse(data.decode("utf-8"))
    return DOMS[key]


def parse(text):
    t = Tree()
    t.feed(text)
    t.close()
    return t.root


def start_screenshot(path, name, height=2000):
    out = os.path.join(OUTDIR, name)
    if ("shot", out) not in PENDING and os.path.exists(out):
        os.remove(out)
    start(("shot", out), ["--screenshot=" + out,
                          "--window-size=1280,%d" % height, "file://" + path])


def screenshot(path, name, height=2000):
    out = os.path.join(OUTDIR, name)
    start_screenshot(path, name, height)
    rc, _ = finish(("shot", out))
    check(rc == 0, "chromium --screenshot: exit %d" % rc)
    with open(out, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000,
          "%s is a PNG of a drawn page (%d bytes)" % (out, len(data)))


def no_injection(root, scripts):
    """Only the page's own script elements; no element or attribute that
    markup in a kernel's text would have made."""
    got = [s.attrs.get("type") for s in root.find("script")]
    check(got == scripts, "script elements %r, the page emits %r" %
          (got, scripts))
    for n in root.walk():
        bad = [a for a in n.attrs if a.startswith("on")]
        check(not bad, "event handler attribute %r on <%s>" % (bad, n.tag))
    check(not root.find("img") and not root.find("textarea"),
          "no img or textarea element")
    title = [n for n in root.find("head")[0].children
             if isinstance(n, Node) and n.tag == "title"]
    check(len(title) == 1 and "INJECTED" not in title[0].text(),
          "the title was not changed by injected script")


write = taptest.writer(TMP)


SCENE = """\
scene: hostile_{op}
kernel: {op}
args:
  - {{tensor: a, dtype: float32, shape: [4], init: ones}}
  - {{tensor: b, dtype: float32, shape: [4], init: {{fill: 2.0}}}}
  - {{tensor: out, dtype: float32, shape: [4], role: output}}
cases:
  - name: c1
  - name: c2
    rounds: 3
  - name: c3
    expect: fail
"""
SCENES = [write("s/%s.yaml" % op, SCENE.format(op=op))
          for op in ("add", "mul", "sub")]
RUN_HTML = os.path.join(TMP, "run.html")
EVENTS = os.path.join(TMP, "events.jsonl")
RUN = None


def run_report():
    """One run on the hostile platform, isolated so that what its kernels
    print is captured: add errors (hostile message and output), mul
    passes (after printing it), sub fails (a mismatch); each scene's c3
    expects a failure: sub's is an xfail, mul's an xpass."""
    global RUN
    if RUN is None:
        RUN = Run(["run", "--format", "html", "--output", RUN_HTML,
                   "--events", EVENTS, "--isolate", "--log-level", "warning",
                   "--plugin", HOSTILE, "--platform", "htmlhostile"] + SCENES)
        check(RUN.rc == 1, "a case failed: exit 1", RUN)
        start_dom(RUN_HTML)
        start_screenshot(RUN_HTML, "html_report_run.png")
    with open(EVENTS) as f:
        cases = [json.loads(line) for line in f]
    # --events is in finish order; the report in selection order, which
    # is the order of the files given (sorted by scene file here).
    return RUN, cases


@test
def run_html__summary_counts_match_events():
    _, cases = run_report()
    root = dom(RUN_HTML)
    for st in ("pass", "fail", "error", "skip", "xfail", "xpass"):
        want = sum(1 for c in cases if c["status"] == st)
        b = root.find("b", data_count=st)
        check(len(b) == 1 and b[0].text() == str(want),
              "summary %s: %r, --events says %d" %
              (st, [x.text() for x in b], want))
    check(len(cases) == 9 and {c["status"] for c in cases} ==
          {"pass", "fail", "error", "xfail", "xpass"},
          "the run has each outcome: %r" % cases)


@test
def run_html__machine_fingerprint_as_json():
    """The Machine section: the host keys of the fingerprint, in order, with
    the values the JSON report of a run on this host gives
    (docs/bench.md#the-environment-fingerprint)."""
    run_report()
    root = dom(RUN_HTML)
    dl = root.find("dl", id="fingerprint")
    check(len(dl) == 1, "one fingerprint list")
    pairs = [(dt.text(), dd.text()) for dt, dd in
             zip(dl[0].find("dt"), dl[0].find("dd"))]
    r = Run(["run", "--format", "json", "--log-level", "warning", "--plugin",
             HOSTILE, "--platform", "htmlhostile", SCENES[0]])
    want = list(json.loads(r.out)["fingerprint"].items())
    check([k for k, _ in want] ==
          ["cpu", "cpus", "governor", "kernel", "libc", "torch"],
          "the JSON's keys: %r" % want)
    check(pairs == want, "the page's %r = the JSON's %r" % (pairs, want))
    h2 = [h.text() for h in root.find("h2")]
    check("Machine" in h2, "a Machine heading: %r" % h2)

def without_tables(message):
    """The message without its mismatch tables' lines: the header line
    "  index ..." and the indented rows under it."""
    out, in_table = [], False
    for line in message.split("\n"):
        if line.startswith("  index "):
            in_table = True
            continue
        if in_table and line.startswith("  "):
            continue
        in_table = False
        out.append(line)
    return "\n".join(out)


def check_mismatch_table(article, message):
    """The message's mismatch table (docs/scene-format.md) as an HTML
    table: the same cells, split where the text has two spaces."""
    lines = message.split("\n")
    want = []
    for k, line in enumerate(lines):
        if line.startswith("  index "):
            want = [re.split(r" {2,}", x.strip())
                    for x in [line] + [y for y in lines[k + 1:]
                                       if y.startswith("  ")]]
            break
    tables = article.find("table", cls="mismatch")
    if not want:
        check(not tables, "no mismatch table without one in the message")
        return
    got = [[c.text() for c in tr.children
            if isinstance(c, Node) and c.tag in ("th", "td")]
           for tr in tables[0].find("tr")]
    check(len(tables) == 1 and got == want,
          "mismatch table %r, the message's %r" % (got, want))
    cap = tables[0].find("caption")
    check(len(cap) == 1 and cap[0].text().startswith("tensor 'out' ("),
          "captioned by its tensor: %r" % [x.text() for x in cap])


@test
def run_html__float64_mismatch_table_five_cells_a_row_once():
    """float64 values are wider than the text table's columns were: the
    HTML table has the header's five cells in every row (it had three),
    and the table is not in the message's <pre> as well."""
    scene = write("f64/wide.yaml", """\
scene: wide
kernel: add
golden: sub
args:
  - {tensor: a, dtype: float64, shape: [3], init: {uniform: [-1, 1]}}
  - {tensor: b, dtype: float64, shape: [3], init: {fill: 0.1}}
  - {tensor: out, dtype: float64, shape: [3], role: output}
cases:
  - name: c
""")
    page = os.path.join(TMP, "f64.html")
    r = Run(["run", "--format", "html", "--output", page, "--no-supervise",
             "--log-level", "warning", scene])
    check(r.rc == 1, "the case fails", r)
    with open(page, encoding="utf-8") as f:
        root = parse(f.read())
    art = root.find("section", id="failures")[0].find("article")
    check(len(art) == 1, "one failure")
    rows = [[c.text() for c in tr.children
             if isinstance(c, Node) and c.tag in ("th", "td")]
            for tr in art[0].find("table", cls="mismatch")[0].find("tr")]
    check(rows[0] == ["index", "actual", "expected", "abs diff",
                      "rel diff"] and len(rows) == 4 and
          all(len(r) == 5 for r in rows), "five cells a row: %r" % rows)
    check(any(len(r[1]) > 16 for r in rows[1:]),
          "a value wider than the old column: %r" % rows)
    pres = [p.text() for p in art[0].find("pre", cls="msg")]
    check(pres and not any("rel diff" in p for p in pres),
          "the table is not in the message text too: %r" % pres)


@test
def run_html__failures_first_with_message_output_rerun():
    _, cases = run_report()
    root = dom(RUN_HTML)
    body = root.find("body")[0]
    sections = [n.attrs.get("id") for n in body.children
                if isinstance(n, Node) and n.tag == "section"]
    check(sections == ["summary", "failures", "cases"],
          "sections in order: %r" % sections)
    arts = root.find("section", id="failures")[0].find("article")
    bad = [c for c in cases if c["status"] in ("fail", "error", "xpass")]
    check(len(arts) == len(bad), "one article per failure: %d, %d" %
          (len(arts), len(bad)))
    for a in arts:
        name = a.find("h3")[0].text()
        c = [c for c in bad
             if name.endswith(c["scene"] + "::" + c["case"])]
        check(len(c) == 1, "article %r is a failing case" % name)
        c = c[0]
        # The message's text in <pre> blocks, its mismatch table once, as
        # a table only (it was also in the <pre>).
        msg = "\n".join(p.text() for p in a.find("pre", cls="msg"))
        want = (without_tables(c["message"] or "(no message)")
                if c["status"] != "error" else "kernel: " + HOSTILE_TEXT)
        check(msg == want, "the message as text: %r, want %r" % (msg, want))
        if c["status"] in ("fail", "xpass"):
            check_mismatch_table(a, c["message"] or "")
        code = a.find("code")
        # The program as invoked (docs/cli.md#output), then the case.
        check(len(code) == 1 and code[0].text().startswith(
            "%s run --case '%s::%s' --seed 0 --platform htmlhostile" %
            (EXE, c["scene"], c["case"])), "rerun command %r" %
            [x.text() for x in code])
        btn = a.find("button", cls="copy")
        check(len(btn) == 1 and btn[0].attrs.get("data-for") ==
              code[0].attrs.get("id"), "a copy button for the command")
        out = a.find("pre", cls="out")
        if c["status"] == "error":
            # A captured NUL is U+FFFD in the result (case/result.c).
            check(len(out) == 1 and
                  ("captured: " + HOSTILE_TEXT +
                   "\nbefore-nul\ufffdafter-nul\n") in out[0].text(),
                  "captured output as text: %r" %
                  [x.text() for x in out])
        # The eager timeline: a bar per phase event, in the event's status.
        phases = [e for e in c["events"] if e["name"] != "load"]
        rects = a.find("rect")
        check(len(rects) == len(phases),
              "%d bars for %d phase events" % (len(rects), len(phases)))
        want = ["pass" if e["status"] == "ok" else e["status"]
                for e in phases]
        check([r.attrs.get("class") for r in rects] == want,
              "bar colours by status %r" % want)
        check(c["status"] == "xpass" or
              any(e["status"] != "ok" for e in phases),
              "the failing phase is among them")


@test
def run_html__hostile_text_never_runs():
    run_report()
    with open(RUN_HTML, "rb") as f:
        raw = f.read()
    check(b"<script>document" not in raw and b"<img" not in raw,
          "the markup is escaped in the file")
    no_injection(dom(RUN_HTML), ["application/json", None])


@test
def run_html__passing_timeline_drawn_when_opened():
    _, cases = run_report()
    root = dom(RUN_HTML)
    rows = root.find("table", id="all")[0].find("tbody")[0].find("tr")
    check(len(rows) == len(cases), "a row per case")
    lazy = root.find("table", id="all")[0].find("details")
    check(lazy and all(not d.find("svg") for d in lazy),
          "passing cases come without a drawn timeline")
    passing = [tr.find("details")[0].attrs["data-i"] for tr in rows
               if tr.find("td")[1].text() == "pass"]
    check(len(passing) == 2, "two passing rows: %r" % passing)
    # The second: rounds 3, so its bars show the rounds in order.
    for i in passing[1:]:
        d = dom(RUN_HTML, "#c%s" % i).find("details", data_i=i)
        check(len(d) == 1 and d[0].attrs.get("open") is not None,
              "#c%s opens case %s" % (i, i))
        name = d[0].find("summary")[0].text()
        c = [c for c in cases if c["scene"] + "::" + c["case"] == name][0]
        check(c["status"] == "pass", "case %s passed" % i)
        phases = [e for e in c["events"] if e["name"] != "load"]
        rects = d[0].find("rect")
        check(len(rects) == len(phases), "%s: %d bars for %d phase events" %
              (name, len(rects), len(phases)))
        titles = [r.find("title")[0].text().split(":")[0] for r in rects]
        want = [e["name"] + (" round %d" % e["round"]
                             if e["round"] is not None else "")
                for e in phases]
        check(titles == want, "bars in event order %r, want %r" %
              (titles, want))


@test
def run_html__screenshot():
    run_report()
    screenshot(RUN_HTML, "html_report_run.png")


@test
def run_html__stale_record_banner_and_load_tick():
    """mul's kernel loads a watched library during run: the record is
    stale; the banner names the case and the object, and the case's
    timeline has a load tick after its record bar. The page is written
    by --report html:PATH beside a TAP report."""
    path = os.path.join(TMP, "stale.html")
    ev = os.path.join(TMP, "stale.jsonl")
    base = os.path.basename(FIXTURE)
    r = Run(["run", "--format", "tap", "--report", "html:" + path,
             "--events", ev, "--isolate", "--log-level", "error", "--plugin", HOSTILE,
             "--platform", "htmlhostile", "--watch", "fixture=" + base,
             "--case", "hostile_mul::c1", SCENES[1]],
            env={"ST_TEST_DLOPEN": FIXTURE})
    check(r.rc == 0 and r.out.startswith("TAP version 13\n"),
          "the case passed; TAP on standard output", r)
    with open(ev) as f:
        case = json.loads(f.readline())
    check(case["record_stale"], "--events says the record is stale", r)
    root = dom(path, "#c0")
    banner = root.find(id="stale")
    check(len(banner) == 1 and "hostile_mul::c1" in banner[0].text() and
          FIXTURE + " loaded during run" in banner[0].text(),
          "the banner names the case and the object: %r" %
          [b.text() for b in banner])
    svg = root.find("details", data_i="0")[0].find("svg")[0]
    ticks = [n for n in svg.find("line")
             if n.find("title") and
             n.find("title")[0].text() == "load: %s (during run)" % FIXTURE]
    rec = [n for n in svg.find("rect")
           if n.find("title")[0].text().startswith("record:")]
    check(len(ticks) == 1 and len(rec) == 1, "a tick and a record bar")
    check(float(ticks[0].attrs["x1"]) >
          float(rec[0].attrs["x"]) + float(rec[0].attrs["width"]),
          "the tick comes after the record bar")


@test
def run_html__large_run_pages_rows():
    """2,600 cases: the first 1000 rows drawn, a button for the rest, and
    a link to a case past them draws the pages up to it."""
    paths = []
    for k in range(2):
        paths.append(write("big/s%d.yaml" % k, SCENE.split("cases:")[0]
                           .format(op="add").replace("hostile_add",
                                                     "big%d" % k) +
                           "cases:\n" + "".join("  - name: c%04d\n" % i
                                                 for i in range(1300))))
    path = os.path.join(TMP, "big.html")
    r = Run(["run", "--format", "html", "--output", path, "--log-level",
             "warning"] + paths)
    check(r.rc == 0, "2600 cases passed", r)
    root = dom(path)
    rows = root.find("table", id="all")[0].find("tbody")[0].find("tr")
    btn = root.find("button", id="more")[0]
    check(len(rows) == 1000 and btn.attrs.get("hidden") is None and
          btn.text() == "Show 1000 more (1600 not shown)",
          "1000 rows and %r" % btn.text())
    check(root.find("b", data_count="pass")[0].text() == "2600",
          "the summary counts every case")
    root = dom(path, "#c2500")
    rows = root.find("table", id="all")[0].find("tbody")[0].find("tr")
    d = root.find("details", data_i="2500")
    check(len(rows) == 2600 and len(d) == 1 and
          d[0].find("summary")[0].text() == "big1::c1200" and
          len(d[0].find("rect")) == 5,
          "#c2500: every page drawn, case 2500 open with its 5 bars: %d rows" % len(rows))


def cdp_eval(url, exprs):
    """Evaluates each JavaScript expression in the page at url, in turn,
    in headless Chromium driven over its DevTools pipe (it reads commands
    on fd 3 and answers on fd 4, NUL-separated JSON), as a user's clicks
    would run; returns their values."""
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    # bash, not sh: dash takes only one-digit descriptors in redirections.
    p = subprocess.Popen(
        ["bash", "-c", 'exec "$0" "$@" 3<&%d 4>&%d' % (r_in, w_out)] +
        chromium(["--remote-debugging-pipe", "about:blank"]),
        pass_fds=(r_in, w_out), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    os.close(r_in)
    os.close(w_out)
    state = {"buf": b"", "id": 0}

    def call(method, params=None, session=None):
        state["id"] += 1
        msg = {"id": state["id"], "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(w_in, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" in state["buf"]:
                m, state["buf"] = state["buf"].split(b"\0", 1)
                m = json.loads(m)
                if m.get("id") == state["id"]:
                    check("error" not in m, "DevTools %s: %r" % (method, m))
                    return m["result"]
            chunk = os.read(r_out, 1 << 20)
            check(chunk, "chromium closed its DevTools pipe")
            state["buf"] += chunk

    try:
        t = call("Target.createTarget", {"url": url})["targetId"]
        s = call("Target.attachToTarget",
                 {"targetId": t, "flatten": True})["sessionId"]
        # Polling a state (this page, not the first about:blank, loaded
        # and its script ran), not ordering two events by time.
        for _ in range(200):
            r = call("Runtime.evaluate", {
                "expression": "location.href === %s && "
                              "document.readyState === 'complete'" %
                              json.dumps(url)}, s)
            if r["result"].get("value") is True:
                break
            time.sleep(0.05)
        out = []
        for e in exprs:
            r = call("Runtime.evaluate", {"expression": e,
                                          "awaitPromise": True,
                                          "returnByValue": True}, s)
            check("exceptionDetails" not in r, "%s: %r" % (e, r))
            out.append(r["result"].get("value"))
    finally:
        os.close(w_in)
        os.close(r_out)
        p.wait(timeout=60)
    return out


@test
def run_html__sort_and_copy_by_clicking():
    _, cases = run_report()
    rows = ("Array.from(document.querySelectorAll('#all tbody tr'))"
            ".map(function(r){return [r.cells[0].textContent,"
            "r.cells[2].textContent];})")
    click = "document.querySelectorAll('#all th')[%d].click();"
    got = cdp_eval("file://" + RUN_HTML, [
        click % 2 + rows, click % 2 + rows, click % 0 + rows,
        "var b=document.querySelector('button.copy');b.click();"
        "new Promise(function(r){setTimeout(function(){r([b.textContent,"
        "String(window.getSelection()),document.getElementById("
        "b.getAttribute('data-for')).textContent]);},500);})"])
    by_dur = [c["scene"] + "::" + c["case"]
              for c in sorted(cases, key=lambda c: c["duration_ns"])]
    check([r[0] for r in got[0]] == by_dur,
          "duration ascending %r, --events says %r" % (got[0], by_dur))
    check([r[0] for r in got[1]] == by_dur[::-1], "then descending")
    check([r[0] for r in got[2]] == sorted(by_dur), "by name %r" % got[2])
    label, selection, command = got[3]
    check(command.startswith(EXE + " run --case ") and
          (label == "Copied" or
           (label == "Selected: press Ctrl+C" and selection == command)),
          "copy: %r, selection %r, command %r" % (label, selection, command))


LOGS = {}


def logs():
    """Two sides of two runs each: spin1 (add once) and spin2 (twice over,
    so slower), and a third side under TORCH_DEVICE_BACKEND_AUTOLOAD=0."""
    if LOGS:
        return LOGS
    scene = write("spin/add.yaml", """\
scene: spin_add
kernel: add
args:
  - {tensor: a, dtype: float32, shape: [65536], init: ones}
  - {tensor: b, dtype: float32, shape: [65536], init: {fill: 2.0}}
  - {tensor: out, dtype: float32, shape: [65536], role: output}
cases:
  - name: big
    rounds: 16
""")
    sides = (("base", SPIN1, {}), ("new", SPIN2, {}),
             ("off", SPIN1, {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}))
    for side, _, _ in sides:
        LOGS[side] = os.path.join(TMP, "logs", side)
        os.makedirs(LOGS[side])
    # Two runs a side, alternated, so that a change in the machine's load
    # meets every side (the machine is shared while meson runs tests).
    for k in range(2):
        for side, plugin, env in sides:
            r = Run(["run", "--format", "tap", "--log-level", "timing",
                     "--log-file", os.path.join(LOGS[side], "%d.log" % k),
                     "--plugin", plugin, "--platform", "spin", scene], env=env)
            check(r.rc == 0, "spin run", r)
    pages = {
        "timing": ["timing", "--format", "html", LOGS["base"]],
        "compare": ["compare", "--format", "html", LOGS["base"], LOGS["new"]],
        "refusal": ["compare", "--format", "html", LOGS["base"], LOGS["off"]],
        "ignored": ["compare", "--format", "html", "--ignore-autoload",
                    LOGS["base"], LOGS["off"]]}
    for name, args in pages.items():
        r = Run(args)
        LOGS[name] = (r, write(name + ".html", r.out))
        start_dom(LOGS[name][1])
    start_screenshot(LOGS["timing"][1], "html_report_timing.png", 1200)
    start_screenshot(LOGS["compare"][1], "html_report_compare.png", 1200)
    return LOGS


@test
def timing_html__a_plot_per_group():
    d = logs()["base"]
    j = Run(["timing", "--format", "json", d])
    h, path = logs()["timing"]
    check(j.rc == 0 and h.rc == 0, "timing ran", h)
    groups = json.loads(j.out)["groups"]
    root = dom(path)
    no_injection(root, [])
    rows = root.find("table", id="groups")[0].find("tr")[1:]
    check(len(rows) == len(groups), "%d rows for %d groups" %
          (len(rows), len(groups)))
    for tr, g in zip(rows, groups):
        tds = tr.find("td")
        check(tds[0].text() == g["scene"] + "::" + g["case"] and
              tds[1].text() == g["phase"], "row %r" % g)
        med = tr.find("line", cls="median")
        check(len(tr.find("svg")) == 1 and len(med) == (1 if g["n"] else 0),
              "one plot with its median for %r" % g)
        dots = tr.find("circle")
        check(len(dots) == min(g["n"], 200), "a dot per sample: %d, n %d" %
              (len(dots), g["n"]))
    screenshot(path, "html_report_timing.png", 1200)


@test
def compare_html__deltas_and_significance():
    L = logs()
    j = Run(["compare", "--format", "json", L["base"], L["new"]])
    h, path = L["compare"]
    check(j.rc == 0 and h.rc == 0, "compare ran", h)
    want = json.loads(j.out)["rows"]
    root = dom(path)
    no_injection(root, [])
    rows = root.find("table", id="rows")[0].find("tr")[1:]
    check(len(rows) == len(want), "%d rows for %d" % (len(rows), len(want)))
    sig = 0
    for tr, w in zip(rows, want):
        tds = tr.find("td")
        check(tds[1].text() == w["phase"], "row order %r" % w)
        delta = tds[6].text()
        if w["significant"]:
            sig += 1
            check(delta.startswith("%+.1f%%" % w["delta_pct"]) and
                  "\u2605" in delta and
                  tds[6].attrs["class"].split()[-1] ==
                  ("slower" if w["delta_pct"] > 0 else "faster"),
                  "significant delta %r for %r" % (delta, w))
        else:
            check(delta.startswith("~"), "not significant: ~ (%r)" % delta)
        check(len(tr.find("line", cls="median")) == 2,
              "a median per side for %r" % w)
    check(sig > 0, "twice the work is a significant slowdown somewhere")
    check(not root.find(id="ignored"), "no --ignore-autoload banner")
    screenshot(path, "html_report_compare.png", 1200)


@test
def compare_html__refusal_shows_records_side_by_side():
    L = logs()
    h, path = L["refusal"]
    check(h.rc == 2, "refused: exit 2", h)
    check("scenetest: error: the autoload conditions differ" in h.err,
          "the error line on stderr", h)
    root = dom(path)
    no_injection(root, [])
    check(len(root.find(id="refusal")) == 1, "a refusal banner")
    rows = root.find("table", id="records")[0].find("tr")[1:]
    diff = [r.find("td")[0].text() for r in rows
            if "diff" in r.attrs.get("class", "")]
    check(diff == ["setting", "raw", "effective"],
          "the differing fields highlighted: %r" % diff)
    same = [r.find("td")[0].text() for r in rows
            if "diff" not in r.attrs.get("class", "")]
    check(same == ["torch_imported", "torch_npu_loaded"], "the rest: %r" %
          same)
    h, path = L["ignored"]
    check(h.rc == 0, "compared anyway", h)
    root = dom(path)
    check(len(root.find(id="ignored")) == 1 and
          len(root.find("table", id="records")) == 1,
          "--ignore-autoload: a warning banner and the records")


@test
def timing_html__hostile_names_are_text():
    name = "<img/src=x/onerror=document.title=1>"
    log = write("hostile.log", "".join(
        "[TIMING] phase pid=7 scene=%s case=c name=run round=%d dur_ns=%d "
        "status=ok\n" % (name, r, 100 + r) for r in range(3)))
    h = Run(["timing", "--format", "html", "--keep-first", log])
    check(h.rc == 0, "timing read the log", h)
    root = dom(write("hostile_timing.html", h.out))
    no_injection(root, [])
    cells = [tr.find("td")[0].text()
             for tr in root.find("table", id="groups")[0].find("tr")[1:]]
    check(cells == [name + "::c"], "the name as text: %r" % cells)


if __name__ == "__main__":
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit(taptest.skip_all("no %s" % CHROMIUM, TMP))
    os.makedirs(OUTDIR, exist_ok=True)
    sys.exit(main(TMP))
