/* SPDX-License-Identifier: MIT */
/* The HTML report (--format html): one self-contained page written at run
 * end from the run's result: the run's metadata and autoload record in
 * words (a banner when a record went stale), a summary bar, failures and
 * errors first (message, captured output, rerun command with a copy
 * button, phase timeline), then every case in a sortable table. Inline
 * CSS and SVG and a little inline JavaScript; nothing from the network.
 * Every string from a scene, a kernel or captured output goes through
 * report/html_escape.h. A large run stays small and quick to open: the
 * failures are markup, the rest is data (one JSON block): the table is
 * drawn a page of rows at a time, and a passing case's timeline when it
 * is opened. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "case/fingerprint.h"
#include "report/autoload.h"
#include "report/html_escape.h"
#include "report/report.h"

/* The phase names a run's timelines use, in order of first appearance:
 * the lanes of every timeline and the JSON block's name table. */
#define LANES_MAX 32

/* One document at run end: the shared reporter state (report.h). */
typedef st__report_doc html_state;

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "margin:0;color:#1d232a;background:#f6f7f9}"
    "header,section{margin:0 auto;max-width:1200px;padding:8px 24px}"
    "h1{font-size:22px;margin:16px 0 8px}h2{font-size:17px;margin:18px 0 8px}"
    "h3{font-size:15px;margin:0 0 6px;word-break:break-all}"
    "dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;"
    "margin:0}dl.meta dt{color:#5b6570}dl.meta dd{margin:0;"
    "font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}"
    ".banner{border-radius:6px;padding:8px 12px;margin:10px 0;"
    "background:#fff4d6;border:1px solid #e0b030}"
    ".bar{display:flex;height:18px;border-radius:4px;overflow:hidden;"
    "background:#dde1e5}.bar span{display:block}"
    ".counts{display:flex;flex-wrap:wrap;gap:18px;list-style:none;padding:0;"
    "margin:8px 0}.counts b{font-size:18px;margin-right:4px}"
    ".pass{--c:#2f9e58}.fail{--c:#d23a3a}.error{--c:#a3369e}"
    ".skip{--c:#8a939c}.xfail{--c:#4d8fd1}.xpass{--c:#e07b12}"
    ".bar span{background:var(--c)}.counts li{border-left:6px solid var(--c);"
    "padding-left:6px}"
    ".badge{display:inline-block;color:#fff;background:var(--c);"
    "border-radius:3px;padding:0 6px;margin-right:6px;font-size:12px;"
    "text-transform:uppercase}"
    "article{background:#fff;border:1px solid #d5dae0;"
    "border-left:5px solid var(--c);border-radius:6px;padding:10px 14px;"
    "margin:10px 0}"
    "pre{background:#f0f2f4;border-radius:4px;padding:8px;margin:6px 0;"
    "white-space:pre-wrap;word-break:break-all;max-height:360px;"
    "overflow:auto;font:12px/1.35 ui-monospace,Menlo,Consolas,monospace}"
    ".rerun{display:flex;gap:8px;align-items:center}"
    ".rerun code{flex:1;background:#f0f2f4;padding:4px 6px;border-radius:4px;"
    "font-size:12px;word-break:break-all}"
    "button{cursor:pointer}"
    "table{border-collapse:collapse;width:100%;background:#fff}"
    "th,td{border-bottom:1px solid #e3e6ea;padding:3px 8px;text-align:left;"
    "vertical-align:top}th{cursor:pointer;user-select:none;background:#eef0f3;"
    "position:sticky;top:0}th:after{content:' \\2195';color:#9aa3ac}"
    "td.st{color:var(--c);font-weight:600}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    "table.mismatch{width:auto;margin:6px 0;font:12px ui-monospace,Menlo,"
    "Consolas,monospace}table.mismatch caption{text-align:left;"
    "font-weight:600;padding:2px 0}table.mismatch th{cursor:auto;"
    "position:static}table.mismatch th:after{content:none}"
    "table.mismatch td{text-align:right}"
    "details summary{cursor:pointer}#more{margin:8px 0;padding:4px 12px}"
    "svg.tl{display:block;width:100%;max-width:900px;height:auto;margin:6px 0}"
    "svg.tl rect{fill:var(--c)}svg text{font:11px "
    "system-ui,sans-serif;fill:#3b444d}"
    ".none{color:#5b6570}";

/* The table of all cases, drawn from the JSON block a page of rows at a
 * time (20,000 rows in the DOM at once take the browser many seconds);
 * sorting by a header, the copy buttons, and drawing a passing case's
 * timeline when its row is opened. Every string goes into the page with
 * textContent, never as markup. */
static const char script[] =
    "(function(){'use strict';"
    "var NS='http://www.w3.org/2000/svg',col=new Intl.Collator(),PAGE=1000;"
    "var data=JSON.parse(document.getElementById('data').textContent);"
    "var tb=document.querySelector('#all tbody'),"
    "btn=document.getElementById('more'),shown=0;"
    "var rows=data.rows.map(function(r,i){return{i:i,r:r};});"
    "function fmt(ns){return ns>=1e9?(ns/1e9).toFixed(3)+' s':"
    "ns>=1e6?(ns/1e6).toFixed(3)+' ms':ns>=1e3?(ns/1e3).toFixed(1)+' \\u00b5s'"
    ":ns+' ns';}"
    "function td(tr,t,c){var e=document.createElement('td');"
    "if(c)e.className=c;if(t!==null)e.textContent=t;tr.appendChild(e);"
    "return e;}"
    "function row(o){var r=o.r,st=data.cstatus[r[1]],"
    "tr=document.createElement('tr');tr.className=st;var c=td(tr,null),e;"
    "if(r[4]){e=document.createElement('a');e.href='#c'+o.i;"
    "e.textContent=r[0];}else{e=document.createElement('details');"
    "e.setAttribute('data-i',o.i);var s=document.createElement('summary');"
    "s.textContent=r[0];e.appendChild(s);}c.appendChild(e);"
    "td(tr,st,'st');td(tr,fmt(r[2]),'num');td(tr,r[3]);return tr;}"
    "function more(n){var f=document.createDocumentFragment();"
    "for(var k=0;k<n&&shown<rows.length;k++)f.appendChild(row(rows[shown++]));"
    "tb.appendChild(f);var left=rows.length-shown;btn.hidden=left===0;"
    "btn.textContent='Show '+Math.min(left,PAGE)+' more ('+left+' not shown)';}"
    "btn.addEventListener('click',function(){more(PAGE);});more(PAGE);"
    "var keys=[function(o){return o.r[0];},function(o){return data.cstatus["
    "o.r[1]];},function(o){return o.r[2];},function(o){return o.r[3];}];"
    "document.querySelectorAll('#all th').forEach(function(th,i){"
    "th.addEventListener('click',function(){"
    "var d=th.getAttribute('data-dir')==='1'?-1:1,k=keys[i];"
    "th.setAttribute('data-dir',d===1?'1':'-1');"
    "rows.sort(function(a,b){var x=k(a),y=k(b);return d*(typeof x==="
    "'number'?x-y:col.compare(x,y))||a.i-b.i;});"
    "var n=Math.max(shown,PAGE);tb.textContent='';shown=0;more(n);});});"
    "document.querySelectorAll('button.copy').forEach(function(b){"
    "b.addEventListener('click',function(){"
    "var el=document.getElementById(b.getAttribute('data-for'));"
    "function sel(){var r=document.createRange();r.selectNodeContents(el);"
    "var s=window.getSelection();s.removeAllRanges();s.addRange(r);"
    "b.textContent='Selected: press Ctrl+C';}"
    "if(navigator.clipboard&&window.isSecureContext)"
    "navigator.clipboard.writeText(el.textContent).then(function(){"
    "b.textContent='Copied';},sel);else sel();});});"
    "function el(n,a,t){var e=document.createElementNS(NS,n);"
    "for(var k in a)e.setAttribute(k,a[k]);"
    "if(t!==undefined){var ti=document.createElementNS(NS,'title');"
    "ti.textContent=t;e.appendChild(ti);}return e;}"
    "function draw(evs){var P=data.phases,S=data.status,lanes=[],end=1;"
    "evs.forEach(function(e){if(typeof e[1]==='string')return;"
    "if(lanes.indexOf(e[0])<0)lanes.push(e[0]);"
    "end=Math.max(end,e[2]+e[3]);});"
    "var L=90,W=800,H=18*lanes.length+22,sx=(W-L-10)/end;"
    "var svg=el('svg',{'class':'tl',viewBox:'0 0 '+W+' '+H,"
    "role:'img'});"
    "lanes.forEach(function(p,j){var t=el('text',{x:4,y:18*j+13});"
    "t.textContent=P[p];svg.appendChild(t);});var last=0;"
    "evs.forEach(function(e){if(typeof e[1]==='string'){"
    "var x=L+last*sx;svg.appendChild(el('line',{x1:x,x2:x,y1:0,y2:H-18,"
    "stroke:'#7048e8','stroke-width':2},'load: '+e[1]+' (during '+P[e[0]]"
    "+')'));svg.appendChild(el('path',{d:'M'+(x-4)+' 0h8l-4 6z',"
    "fill:'#7048e8'},'load: '+e[1]));return;}"
    "last=e[2]+e[3];var j=lanes.indexOf(e[0]);"
    "svg.appendChild(el('rect',{x:L+e[2]*sx,y:18*j+3,"
    "width:Math.max(1.5,e[3]*sx),height:13,rx:2,'class':S[e[4]]},"
    "P[e[0]]+(e[1]>=0?' round '+e[1]:'')+': '+fmt(e[3])"
    "+' '+['ok','fail','error','skip'][e[4]]+' (at +'+fmt(e[2])+')'));});"
    "var ax=el('text',{x:L,y:H-4});ax.textContent='0';svg.appendChild(ax);"
    "ax=el('text',{x:W-10,y:H-4,'text-anchor':'end'});"
    "ax.textContent=fmt(end);svg.appendChild(ax);return svg;}"
    "function show(d){if(!d.open||d.getAttribute('data-done'))return;"
    "d.setAttribute('data-done','1');"
    "var evs=data.cases[d.getAttribute('data-i')];"
    "if(evs&&evs.length)d.appendChild(draw(evs));else{"
    "var p=document.createElement('p');p.className='none';"
    "p.textContent='no phase events';d.appendChild(p);}}"
    "document.getElementById('all').addEventListener('toggle',function(ev){"
    "show(ev.target);},true);"
    /* A link to "#cN" opens case N (a failure's article has that id). */
    "var m=/^#c([0-9]+)$/.exec(location.hash);if(m){var d=null;"
    "while(!(d=tb.querySelector('details[data-i=\"'+m[1]+'\"]'))&&"
    "shown<rows.length)more(PAGE);"
    "if(d){d.open=true;show(d);d.scrollIntoView();}}"
    "})();";

static void put_duration(FILE *out, uint64_t ns) {
  if (ns >= 1000000000u)
    fprintf(out, "%.3f s", (double)ns / 1e9);
  else if (ns >= 1000000u)
    fprintf(out, "%.3f ms", (double)ns / 1e6);
  else if (ns >= 1000u)
    fprintf(out, "%.1f \xc2\xb5s", (double)ns / 1e3);
  else
    fprintf(out, "%" PRIu64 " ns", ns);
}

/* What the report puts first: the statuses that fail a run
 * (docs/cli.md#exit-status: xpass counts as a failure, xfail as a pass). */
static int is_failure(st_case_status s) {
  return s == ST_CASE_FAIL || s == ST_CASE_ERROR || s == ST_CASE_XPASS;
}

static int is_load(const st_event *ev) { return strcmp(ev->name, "load") == 0; }

/* A record's field value, or NULL. */
static const char *rec_value(const st__record *r, const char *key) {
  size_t i;
  for (i = 0; i < r->n; i++)
    if (strcmp(r->fields[i].key, key) == 0)
      return r->fields[i].value;
  return NULL;
}

/* A record in words, as the text report says it, then as its line. */
static void put_record(FILE *out, const st__record *r) {
  const char *setting = rec_value(r, "setting");
  const char *raw = rec_value(r, "raw");
  const char *eff = rec_value(r, "effective");
  char module[256];
  size_t i;

  fputs("<p>", out);
  if (setting != NULL && strcmp(setting, "unset") == 0) {
    fputs("TORCH_DEVICE_BACKEND_AUTOLOAD unset", out);
  } else {
    fputs("TORCH_DEVICE_BACKEND_AUTOLOAD=<code>", out);
    st__html_text(out, raw != NULL ? raw : "?");
    fputs("</code>", out);
  }
  fputs(eff != NULL && strcmp(eff, "enabled") == 0
            ? ", torch autoloads device backends"
            : ", torch device-backend autoload disabled",
        out);
  for (i = 0; i < r->n; i++) {
    const char *v = r->fields[i].value;
    if (st__record_module(r->fields[i].key, module, sizeof module) == NULL)
      continue;
    fputs(strcmp(r->fields[i].key, "torch_imported") == 0 ? "; " : ", ", out);
    st__html_text(out, module);
    if (strcmp(r->fields[i].key, "torch_imported") == 0)
      fputs(strcmp(v, "true") == 0 ? " imported" : " not imported", out);
    else
      fputs(strcmp(v, "true") == 0 ? " loaded" : " not loaded", out);
  }
  fprintf(out, " (pid %ld)</p><pre>torch_backend_autoload", r->pid);
  for (i = 0; i < r->n; i++) {
    fputc(' ', out);
    st__html_text(out, r->fields[i].key);
    fputc('=', out);
    st__html_text(out, r->fields[i].value);
  }
  fprintf(out, " pid=%ld</pre>", r->pid);
}

/* The machine (docs/bench.md#the-environment-fingerprint): the host keys
 * of the process writing the page, as the JSON report's `fingerprint`. */
static void put_fingerprint(FILE *out) {
  st__fingerprint fp;
  size_t i;
  st__fingerprint_collect(NULL, NULL, &fp);
  fputs("<h2>Machine</h2><dl class=\"meta\" id=\"fingerprint\">", out);
  for (i = 0; i < fp.n; i++) {
    fputs("<dt>", out);
    st__html_text(out, fp.key[i]);
    fputs("</dt><dd>", out);
    st__html_text(out, fp.value[i]);
    fputs("</dd>", out);
  }
  fputs("</dl>", out);
}

/* The name the reports give a case: "SCENE::CASE", "@k" for iteration k
 * of a repeated run (report.c). malloc'd, NULL when out of memory. */
static char *case_id(const html_state *st, const st_case_result *r) {
  return st__report_case_id(st_case_result_scene(r), st_case_result_case(r),
                            st_case_result_iteration(r), st->info.repeat, 0);
}

static void put_name(FILE *out, const html_state *st, const st_case_result *r) {
  char *id = case_id(st, r);
  st__html_text(out, id != NULL ? id : "?");
  free(id);
}

/* " (OBJECT loaded during PHASE, ...)": the load events after the
 * case's record event, what made its record stale. */
static void put_loaded_after_record(FILE *out, const st_case_result *r) {
  size_t i, n = st_case_result_event_count(r), shown = 0;
  int after = 0;
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (strcmp(ev->name, "record") == 0)
      after = 1;
    if (!after || !is_load(ev))
      continue;
    fputs(shown++ ? ", " : " (", out);
    st__html_text(out, ev->object);
    fputs(" loaded during ", out);
    st__html_text(out, ev->phase);
  }
  if (shown)
    fputc(')', out);
}

static void put_header(FILE *out, const html_state *st,
                       const st_run_result *run) {
  char host[256];
  size_t i, n = st_run_result_count(run), stale = 0, n_recs = 0;
  st__record *recs = NULL;
  int a;

  if (gethostname(host, sizeof host) != 0)
    snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = '\0';
  fputs("<header><h1>scenetest run</h1><dl class=\"meta\">", out);
  fprintf(out, "<dt>version</dt><dd>%s</dd><dt>platform</dt><dd>",
          st_version_string());
  st__html_text(out, st->info.platform);
  fprintf(out, "</dd><dt>seed</dt><dd>%" PRIu64 "</dd><dt>start</dt><dd>",
          st->info.seed);
  st__html_text(out, st->start);
  fputs("</dd><dt>host</dt><dd>", out);
  st__html_text(out, host);
  fputs("</dd><dt>command</dt><dd>", out);
  for (a = 0; a < st->cfg.argc; a++) {
    char *q = NULL;
    size_t qn = 0;
    FILE *m = open_memstream(&q, &qn);
    if (m == NULL)
      continue;
    st__shell_quote(m, st->cfg.argv[a]);
    if (fclose(m) == 0) {
      if (a > 0)
        fputc(' ', out);
      st__html_text(out, q);
    }
    free(q);
  }
  if (st__records_distinct(run, &recs, &n_recs) != ST_OK)
    n_recs = 0; /* out of memory: the page goes on without them */
  fprintf(out, "</dd></dl><h2>Autoload record%s</h2>", n_recs > 1 ? "s" : "");
  if (st__records_settings(recs, n_recs) > 1)
    fprintf(out,
            "<div class=\"banner\" id=\"conditions\">The processes of this "
            "run reported %zu different autoload conditions.</div>",
            st__records_settings(recs, n_recs));
  else if (n_recs > 1)
    /* One environment: the records differ in what a process had loaded
     * at its first case, which is where it started in the run. */
    fputs("<p class=\"none\" id=\"moments\">One autoload setting; the "
          "records differ only in the watched modules loaded when each "
          "process took its record (a process records at its first case: a "
          "replacement child, a -j or --isolate child starts at another "
          "one).</p>",
          out);
  for (i = 0; i < n_recs; i++)
    put_record(out, &recs[i]);
  if (n_recs == 0)
    fputs("<p class=\"none\">no record (no case reached its record "
          "phase)</p>",
          out);
  st__records_free(recs, n_recs);
  for (i = 0; i < n; i++)
    if (st_case_result_record_stale(st_run_result_get(run, i)))
      stale++;
  if (stale > 0) {
    int shown = 0;
    fprintf(out,
            "<div class=\"banner\" id=\"stale\"><b>The autoload record is "
            "stale</b> in %zu case%s: a watched module was loaded after the "
            "record phase (docs/measuring.md#the-staleness-check), so the "
            "record does not "
            "describe what these cases ran with:",
            stale, stale == 1 ? "" : "s");
    for (i = 0; i < n && shown < 5; i++) {
      const st_case_result *r = st_run_result_get(run, i);
      if (!st_case_result_record_stale(r))
        continue;
      fprintf(out, "%s<a href=\"#c%zu\">", shown++ ? ", " : " ", i);
      put_name(out, st, r);
      fputs("</a>", out);
      put_loaded_after_record(out, r);
    }
    fputs(stale > 5 ? ", \xe2\x80\xa6</div>" : "</div>", out);
  }
  put_fingerprint(out);
  fputs("</header>", out);
}

static void put_summary(FILE *out, const st_run_result *run) {
  static const st_case_status order[] = {ST_CASE_PASS,  ST_CASE_FAIL,
                                         ST_CASE_ERROR, ST_CASE_SKIP,
                                         ST_CASE_XFAIL, ST_CASE_XPASS};
  const char *names[6];
  size_t counts[6], total = st_run_result_count(run), i;

  for (i = 0; i < 6; i++) {
    names[i] = st_case_status_name(order[i]);
    counts[i] = st_run_result_count_status(run, order[i]);
  }
  fprintf(out,
          "<section id=\"summary\"><h2>Summary: %zu case%s</h2>"
          "<div class=\"bar\">",
          total, total == 1 ? "" : "s");
  for (i = 0; i < 6; i++)
    if (counts[i] > 0)
      fprintf(out,
              "<span class=\"%s\" style=\"flex:%zu\" title=\"%zu %s\">"
              "</span>",
              names[i], counts[i], counts[i], names[i]);
  fputs("</div><ul class=\"counts\">", out);
  for (i = 0; i < 6; i++)
    fprintf(out, "<li class=\"%s\"><b data-count=\"%s\">%zu</b>%s</li>",
            names[i], names[i], counts[i], names[i]);
  fputs("</ul></section>", out);
}

/* The lane (phase name) of ev in lanes, added when new; -1 when full. */
static int lane_of(const char **lanes, size_t *n, const char *name) {
  size_t i;
  for (i = 0; i < *n; i++)
    if (strcmp(lanes[i], name) == 0)
      return (int)i;
  if (*n == LANES_MAX)
    return -1;
  lanes[*n] = name;
  return (int)(*n)++;
}

static uint64_t first_start(const st_case_result *r) {
  size_t i, n = st_case_result_event_count(r);
  uint64_t t0 = UINT64_MAX;
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (!is_load(ev) && ev->start_ns < t0)
      t0 = ev->start_ns;
  }
  return t0 == UINT64_MAX ? 0 : t0;
}

/* A case's phase timeline as SVG, the same drawing as the script's:
 * one lane per phase name, a bar per phase event at its start relative
 * to the case's first event, a violet tick where a load event says a
 * library entered the process (the end of the phase that loaded it). */
static void put_timeline(FILE *out, const st_case_result *r) {
  const char *lanes[LANES_MAX];
  size_t n_lanes = 0, i, n = st_case_result_event_count(r);
  uint64_t t0 = first_start(r), end = 1, last = 0;
  const double L = 90, W = 800;
  double sx, h;

  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (is_load(ev))
      continue;
    (void)lane_of(lanes, &n_lanes, ev->name);
    if (ev->start_ns - t0 + ev->dur_ns > end)
      end = ev->start_ns - t0 + ev->dur_ns;
  }
  if (n_lanes == 0) {
    fputs("<p class=\"none\">no phase events</p>", out);
    return;
  }
  sx = (W - L - 10) / (double)end;
  h = 18.0 * (double)n_lanes + 22;
  fprintf(out, "<svg class=\"tl\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">", W,
          h);
  for (i = 0; i < n_lanes; i++) {
    fprintf(out, "<text x=\"4\" y=\"%zu\">", 18 * i + 13);
    st__html_text(out, lanes[i]);
    fputs("</text>", out);
  }
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    double x, w;
    int lane;
    if (is_load(ev)) {
      x = L + (double)last * sx;
      fprintf(out,
              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%.0f\" "
              "stroke=\"#7048e8\" stroke-width=\"2\"><title>load: ",
              x, x, h - 18);
      st__html_text(out, ev->object);
      fputs(" (during ", out);
      st__html_text(out, ev->phase);
      fprintf(out,
              ")</title></line><path d=\"M%.1f 0h8l-4 6z\" "
              "fill=\"#7048e8\"><title>load: ",
              x - 4);
      st__html_text(out, ev->object);
      fputs("</title></path>", out);
      continue;
    }
    lane = lane_of(lanes, &n_lanes, ev->name);
    if (lane < 0)
      continue;
    last = ev->start_ns - t0 + ev->dur_ns;
    x = L + (double)(ev->start_ns - t0) * sx;
    w = (double)ev->dur_ns * sx;
    fprintf(out,
            "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"13\" rx=\"2\" "
            "class=\"%s\"><title>",
            x, 18 * lane + 3, w < 1.5 ? 1.5 : w,
            ev->status == ST_PHASE_OK      ? "pass"
            : ev->status == ST_PHASE_FAIL  ? "fail"
            : ev->status == ST_PHASE_ERROR ? "error"
                                           : "skip");
    st__html_text(out, ev->name);
    if (ev->round >= 0)
      fprintf(out, " round %d", ev->round);
    fputs(": ", out);
    put_duration(out, ev->dur_ns);
    fprintf(out, " %s (at +", st_phase_status_name(ev->status));
    put_duration(out, ev->start_ns - t0);
    fputs(")</title></rect>", out);
  }
  fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">0</text>", L, h - 4);
  fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", W - 10,
          h - 4);
  put_duration(out, end);
  fputs("</text></svg>", out);
}

/* Splits line[0..n) into cells at runs of two or more spaces (the
 * columns of the compare's mismatch table, docs/scene-format.md).
 * Returns the count, at most max; begin/len get each cell. */
static size_t split_cells(const char *line, size_t n, const char **begin,
                          size_t *len, size_t max) {
  size_t i = 0, k = 0;
  while (i < n && line[i] == ' ')
    i++;
  while (i < n && k < max) {
    size_t b = i;
    while (i < n && !(line[i] == ' ' && i + 1 < n && line[i + 1] == ' '))
      i++;
    while (b < i && line[i - 1] == ' ')
      i--;
    begin[k] = line + b;
    len[k++] = i - b;
    while (i < n && line[i] == ' ')
      i++;
  }
  return k;
}

/* A "  index  actual ..." header line of a mismatch table: split into
 * cells (at most 8) into cb/cl, else 0. */
static size_t table_header(const char *p, size_t n, const char **cb,
                           size_t *cl) {
  size_t nc = split_cells(p, n, cb, cl, 8);
  if (nc >= 3 && cl[0] == 5 && memcmp(cb[0], "index", 5) == 0 && p[0] == ' ')
    return nc;
  return 0;
}

/* The table whose header line is at p (cells cb/cl, nc of them) and the
 * indented rows under it, captioned by caption (may be NULL). Returns
 * where the text after the table starts. */
static const char *put_table_at(FILE *out, const char *p, const char **cb,
                                const size_t *cl, size_t nc,
                                const char *caption, size_t caption_n) {
  const char *eol = strchr(p, '\n');
  size_t k;
  fputs("<table class=\"mismatch\">", out);
  if (caption != NULL) {
    fputs("<caption>", out);
    st__html_text_n(out, caption, caption_n);
    fputs("</caption>", out);
  }
  fputs("<tr>", out);
  for (k = 0; k < nc; k++) {
    fputs("<th>", out);
    st__html_text_n(out, cb[k], cl[k]);
    fputs("</th>", out);
  }
  fputs("</tr>", out);
  for (p = eol != NULL ? eol + 1 : p + strlen(p); *p == ' ' && p[1] == ' ';) {
    size_t m, rc;
    const char *rb[8];
    size_t rl[8];
    eol = strchr(p, '\n');
    m = eol != NULL ? (size_t)(eol - p) : strlen(p);
    rc = split_cells(p, m, rb, rl, 8);
    fputs("<tr>", out);
    for (k = 0; k < rc; k++) {
      fprintf(out, rc < nc && k + 1 == rc ? "<td colspan=\"%zu\">" : "<td>",
              nc - k);
      st__html_text_n(out, rb[k], rl[k]);
      fputs("</td>", out);
    }
    fputs("</tr>", out);
    p = eol != NULL ? eol + 1 : p + m;
  }
  fputs("</table>", out);
  return p;
}

/* msg[0..n) as a <pre class="msg">, without a last newline; nothing when
 * empty. */
static void put_pre(FILE *out, const char *msg, size_t n) {
  if (n > 0 && msg[n - 1] == '\n')
    n--;
  if (n == 0)
    return;
  fputs("<pre class=\"msg\">", out);
  st__html_text_n(out, msg, n);
  fputs("</pre>", out);
}

/* A failure's message: its text in <pre> blocks, and each mismatch table
 * of a failing compare (a line "index  actual  expected  abs diff  rel
 * diff" and the indented rows under it, docs/scene-format.md) in their
 * place as an HTML table instead, captioned by the "tensor '...' (...):"
 * line above it: the table is shown once, as a table. */
static void put_message(FILE *out, const char *msg) {
  const char *p = msg, *text = msg, *caption = NULL;
  size_t caption_n = 0;
  while (*p != '\0') {
    const char *eol = strchr(p, '\n');
    size_t n = eol != NULL ? (size_t)(eol - p) : strlen(p);
    const char *cb[8];
    size_t cl[8], nc;
    if (n > 0 && p[n - 1] == ':' && strncmp(p, "tensor '", 8) == 0) {
      caption = p;
      caption_n = n - 1;
    }
    if ((nc = table_header(p, n, cb, cl)) > 0) {
      put_pre(out, text, (size_t)(p - text));
      p = text = put_table_at(out, p, cb, cl, nc, caption, caption_n);
      caption = NULL;
      continue;
    }
    p = eol != NULL ? eol + 1 : p + n;
  }
  put_pre(out, text, strlen(text));
}

static void put_failure(FILE *out, const html_state *st,
                        const st_case_result *r, size_t idx) {
  const char *status = st_case_status_name(st_case_result_status(r));
  const char *msg = st_case_result_message(r);
  const char *output = st_case_result_output(r);
  char *cmd = NULL;
  size_t cmd_n = 0;
  FILE *m;

  fprintf(out,
          "<article class=\"%s\" id=\"c%zu\"><h3><span class=\"badge\">"
          "%s</span>",
          status, idx, status);
  put_name(out, st, r);
  fputs("</h3>", out);
  if (msg != NULL && msg[0] != '\0')
    put_message(out, msg);
  else
    fputs("<pre class=\"msg\">(no message)</pre>", out);
  if (output != NULL && output[0] != '\0') {
    fputs("<details open><summary>Captured output</summary><pre class=\"out\">",
          out);
    st__html_text(out, output);
    fputs("</pre></details>", out);
  }
  if ((m = open_memstream(&cmd, &cmd_n)) != NULL) {
    st__report_rerun(m, &st->cfg, st_case_result_scene(r),
                     st_case_result_case(r), st_case_result_seed(r),
                     st_case_result_platform(r), st_case_result_file(r));
    if (fclose(m) == 0) {
      fprintf(out, "<div class=\"rerun\"><code id=\"r%zu\">", idx);
      st__html_text(out, cmd);
      fprintf(out,
              "</code><button class=\"copy\" type=\"button\" "
              "data-for=\"r%zu\">Copy</button></div>",
              idx);
    }
    free(cmd);
  }
  put_timeline(out, r);
  fputs("</article>", out);
}

static void put_table(FILE *out, const st_run_result *run) {
  fprintf(out,
          "<section id=\"cases\"><h2>All cases (%zu)</h2><p class=\"none\">"
          "Click a header to sort; open a case for its phase timeline.</p>"
          "<noscript><p>The table of all cases is drawn by the page's script; "
          "the failures above are complete without it.</p></noscript>"
          "<table id=\"all\"><thead><tr><th>name</th><th>status</th>"
          "<th>duration</th><th>platform</th></tr></thead><tbody></tbody>"
          "</table><button id=\"more\" type=\"button\" hidden>Show more"
          "</button></section>",
          st_run_result_count(run));
}

/* The table's rows and the timelines of the cases that are not
 * failures, as data: {"rows": [[name, case status, duration_ns,
 * platform, failure 0/1]], "cstatus": [names of case statuses], "cases":
 * {"INDEX": [[lane, round, start_ns, dur_ns, status] or [phase,
 * "object"] for a load]}, "status": [class per phase status], "phases":
 * [names]}. */
static void put_data(FILE *out, const html_state *st,
                     const st_run_result *run) {
  const char *names[LANES_MAX];
  size_t n_names = 0, i, k, n = st_run_result_count(run);
  int first = 1;

  fputs("<script type=\"application/json\" id=\"data\">{\"rows\": [", out);
  for (i = 0; i < n; i++) {
    const st_case_result *r = st_run_result_get(run, i);
    char *id = case_id(st, r);
    fputs(i ? ",\n[" : "\n[", out);
    st__html_json_string(out, id != NULL ? id : "");
    free(id);
    fprintf(out, ",%d,%" PRIu64 ",", (int)st_case_result_status(r),
            st_case_result_duration_ns(r));
    st__html_json_string(out, st_case_result_platform(r));
    fprintf(out, ",%d]", is_failure(st_case_result_status(r)));
  }
  /* Indexed by st_case_status. */
  fputs("],\n\"cstatus\": [", out);
  for (i = 0; i <= ST_CASE_XPASS; i++)
    fprintf(out, "%s\"%s\"", i ? "," : "",
            st_case_status_name((st_case_status)i));
  fputs("],\n\"cases\": {", out);
  for (i = 0; i < n; i++) {
    const st_case_result *r = st_run_result_get(run, i);
    size_t ne = st_case_result_event_count(r);
    uint64_t t0 = first_start(r);
    int efirst = 1;
    if (is_failure(st_case_result_status(r)))
      continue;
    fprintf(out, "%s\"%zu\":[", first ? "" : ",\n", i);
    first = 0;
    for (k = 0; k < ne; k++) {
      const st_event *ev = st_case_result_event(r, k);
      int lane = lane_of(names, &n_names, is_load(ev) ? ev->phase : ev->name);
      if (lane < 0)
        continue;
      fputs(efirst ? "[" : ",[", out);
      efirst = 0;
      if (is_load(ev)) {
        fprintf(out, "%d,", lane);
        st__html_json_string(out, ev->object);
        fputc(']', out);
        continue;
      }
      fprintf(out, "%d,%d,%" PRIu64 ",%" PRIu64 ",%d]", lane, ev->round,
              ev->start_ns - t0, ev->dur_ns, (int)ev->status);
    }
    fputc(']', out);
  }
  fputs("},\n\"status\": [\"pass\",\"fail\",\"error\",\"skip\"],\n"
        "\"phases\": [",
        out);
  for (i = 0; i < n_names; i++) {
    if (i > 0)
      fputc(',', out);
    st__html_json_string(out, names[i]);
  }
  fputs("]}</script>", out);
}

static void html_run_end(void *data, const st_run_result *run) {
  html_state *st = data;
  FILE *out = st->cfg.out;
  size_t i, n = st_run_result_count(run), n_fail = 0;

  fputs(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>scenetest run: ",
      out);
  for (i = 0; i < n; i++)
    if (is_failure(st_case_result_status(st_run_result_get(run, i))))
      n_fail++;
  fprintf(out, "%zu case%s, %zu failed</title><style>%s</style></head><body>",
          n, n == 1 ? "" : "s", n_fail, css);
  put_header(out, st, run);
  put_summary(out, run);
  fprintf(out,
          "<section id=\"failures\"><h2>Failures, errors and xpasses "
          "(%zu)</h2>",
          n_fail);
  if (n_fail == 0)
    fputs("<p class=\"none\">none</p>", out);
  for (i = 0; i < n; i++) {
    const st_case_result *r = st_run_result_get(run, i);
    if (is_failure(st_case_result_status(r)))
      put_failure(out, st, r, i);
  }
  fputs("</section>", out);
  put_table(out, run);
  put_data(out, st, run);
  fprintf(out, "<script>%s</script></body></html>\n", script);
  fflush(out);
}

st_status st__report_html_new(const st__report_config *cfg, st_observer *obs) {
  return st__report_doc_new(cfg, html_run_end, obs);
}

void st__report_html_free(st_observer *obs) { st__report_doc_free(obs); }
