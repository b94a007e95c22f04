#!/usr/bin/env bash
# Renders report.html in headless Chromium (Debian's `chromium`, installed when missing) and
# checks the DOM the browser built, for: a testdata fixture (LRU), two fixtures as shards of one
# report (LFU, per-file section), a dump whose keys are markup (with a fixture as its baseline),
# and a demo dump of ~40k keys with prefixes and TTLs written by a real redis-server
# (scripts/bench-gen.lua), with an older state of it as its baseline. Checks: the headline
# numbers equal summary.json's, the since-baseline figures `diff --format json`'s, the top prefix
# is in the prefix tree, no element came from a key's text, no script error, no network URL in
# the file and no request in Chromium's network log while a script clicks through the page
# (a lint rule's link opens its closed findings), the page stays small; saves a screenshot of
# each report section. Usage: scripts/check-html.sh [BIN]; with SCREENSHOTS=DIR the demo's
# section screenshots are also copied to DIR (how docs/report-*.png are made).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/rdbscope}
# scripts/test.sh runs this after `cargo test`, which has just built target/debug/rdbscope.
[ -x "$bin" ] || cargo build -q
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (the HTML report is checked in a real browser)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
fi
python=${RDBSCOPE_PYTHON:-python3}
work=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work/dumps" "$work/chrome"  # the reports and screenshots stay
}
trap cleanup EXIT
mkdir -p "$work/dumps"

# Starts a redis-server saving to $work/dumps/$1; sets $port and $server_pid.
start_server() {
    port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --dir "$work/dumps" --dbfilename "$1" \
        --save '' --appendonly no --daemonize no >"$work/dumps/$1.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.1; done
    echo "check-html: redis-server did not start" >&2; exit 1
}
stop_server() {
    redis-cli -p "$port" save >/dev/null
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
}

# A dump whose keys, prefix and value are markup, saved by a real redis-server.
start_server hostile.rdb
hostile='</script><img src=x onerror=alert(1)>'
redis-cli -p "$port" set "$hostile" v >/dev/null
redis-cli -p "$port" set "<script>alert(2)</script>:k" v >/dev/null
redis-cli -p "$port" hset "\"><svg onload=alert(3)>:h" f "</style><img src=y>" >/dev/null
redis-cli -p "$port" set "user:1" "&amp; \u2028" >/dev/null
redis-cli -p "$port" set "{</title><b>tag}:x" v px 3600000 >/dev/null
stop_server

# The demo's baseline, an older state of it: fewer users, carts with a TTL, flags since deleted,
# a smaller leaderboard (still a listpack) and blob, no job locks.
start_server demo-old.rdb
redis-cli -p "$port" --eval scripts/bench-gen.lua , users 1 8000 >/dev/null
redis-cli -p "$port" eval "for i=1,1500 do local k='cart:{u'..(i%40)..'}:'..i
redis.call('hset',k,'sku',i,'qty',i%7) redis.call('expire',k,86400) end
for i=1,3000 do redis.call('set','legacy:flag:'..i,'on') end
for i=1,100 do redis.call('hset','leaderboard:big','m'..i,i) end
redis.call('set','blob:big',string.rep('x',100000)) return 0" 0 >/dev/null
stop_server

# The demo: bench-gen.lua's production-like users (~3.8 keys each, ~31 % with a TTL), hash-tagged
# carts, 500 keys expiring in the same minute (an expiry storm), a big hash and a big string.
start_server demo.rdb
redis-cli -p "$port" --eval scripts/bench-gen.lua , users 1 10000 >/dev/null
redis-cli -p "$port" eval "for i=1,2000 do redis.call('hset','cart:{u'..(i%40)..'}:'..i,'sku',i,'qty',i%7) end
for i=1,500 do redis.call('set','job:lock:'..i,'x','px',7200000) end
for i=1,6000 do redis.call('hset','leaderboard:big','m'..i,i) end
redis.call('set','blob:big',string.rep('x',300000)) return 0" 0 >/dev/null
stop_server

# page_requests NETLOG: the URLs the page asked for, from Chromium's network log. The browser's
# own traffic (updates, accounts) has no origin as initiator; a page's requests have one.
page_requests() {
    "$python" - "$1" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
for e in log["events"]:
    p = e.get("params", {})
    if e["type"] == start and "url" in p and p.get("initiator") != "not an origin":
        print(p["url"])
PY
}
# The detector finds a request when there is one.
mkdir -p "$work/probe"
printf '<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/probe.png"></body></html>' >"$work/probe/probe.html"
chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
    --log-net-log="$work/probe/net.json" --dump-dom "file://$work/probe/probe.html" >/dev/null 2>&1
if ! page_requests "$work/probe/net.json" | grep -q probe.png; then
    echo "check-html: the network-log check did not see a probe page's request" >&2; exit 1
fi

sections=(headline baseline types prefixes ttl keys sizes cluster files lint)
# check NAME SHOTS [--baseline OLD] DUMP...: SHOTS is `sections` (one screenshot per section) or
# `page`. With a baseline, `diff --format json` of the same runs is what the page must show.
check() {
    local name=$1 shots=$2 out="$work/report-$1" baseline=()
    shift 2
    if [ "$1" = --baseline ]; then baseline=(--baseline "$2"); shift 2; fi
    "$bin" report "$@" "${baseline[@]}" --out-dir "$out" -q >/dev/null
    if [ ${#baseline[@]} -gt 0 ]; then
        "$bin" diff -q --format json --old "${baseline[1]}" --new "$@" >"$out/diff-cli.json"
    fi
    chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
        --enable-logging=stderr --v=0 \
        --dump-dom "file://$out/report.html" 2>"$out/console.log" >"$out/dom.html"
    # The same page with a script that clicks like a user: zooms into the first depth-1 prefix,
    # sorts the top keys by memory, filters them by the first key's name, follows the link of a
    # lint rule whose findings are closed; it records the results on <body> for the DOM check.
    "$python" - "$out" <<'PY'
import sys
out = sys.argv[1]
page = open(f"{out}/report.html", encoding="utf-8").read()
act = """<script>(function(){var b=document.body.dataset;
var n=document.querySelector('#prefix-tree svg.n[data-d="1"]');
n.dispatchEvent(new MouseEvent('click',{bubbles:true}));
b.zoomed=n.getAttribute('width');b.info=document.getElementById('prefix-info').textContent.split('\\n')[0];
b.root=document.querySelector('#prefix-tree svg.n[data-d="0"]').getAttribute('width');
document.querySelector('#top-keys th:nth-child(6)').click();
var rows=Array.from(document.querySelectorAll('#top-keys tbody tr'));
var v=rows.map(function(r){return Number(r.cells[5].dataset.v);});
b.sorted=String(v.every(function(x,i){return i==0||v[i-1]<=x;}));
var f=document.getElementById('filter');f.value=rows[rows.length-1].cells[0].textContent;
f.dispatchEvent(new Event('input'));
b.shown=String(rows.filter(function(r){return r.style.display!=='none';}).length);
b.rows=String(rows.length);
var target=function(a){return document.getElementById(a.getAttribute('href').slice(1));};
var shut=Array.from(document.querySelectorAll('#lint a[href^="#rule-"]')).find(function(a){return !target(a).open;});
if(shut){shut.click();b.ruleopen=String(target(shut).open);}else{b.ruleopen='none';}})();</script></body>"""
open(f"{out}/interact.html", "w", encoding="utf-8").write(page.replace("</body>", act))
PY
    chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
        --log-net-log="$out/net.json" \
        --dump-dom "file://$out/interact.html" 2>/dev/null >"$out/interact-dom.html"
    page_requests "$out/net.json" >"$out/requests.txt"
    if [ "$shots" = page ]; then
        chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
            --hide-scrollbars --window-size=1100,2400 --screenshot="$out/page.png" \
            "file://$out/report.html" >/dev/null 2>&1
        [ -s "$out/page.png" ] || { echo "check-html: $name: no screenshot" >&2; exit 1; }
    fi
    # One screenshot per section: a copy of the page showing only that section.
    for id in "${sections[@]}"; do
        [ "$shots" = sections ] || break
        grep -q "<section id=\"$id\">" "$out/report.html" || continue
        sed "s|</head>|<style>body>*:not(#$id){display:none!important}body{margin:0 auto}</style></head>|" \
            "$out/report.html" >"$out/only-$id.html"
        chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
            --hide-scrollbars --window-size="$(size "$id")" --screenshot="$out/$id.png" \
            "file://$out/only-$id.html" >/dev/null 2>&1
        [ -s "$out/$id.png" ] || { echo "check-html: $name: no screenshot of $id" >&2; exit 1; }
    done
    "$python" - "$out" "$name" <<'PY'
import html.parser, json, re, sys
out, name = sys.argv[1], sys.argv[2]
summary = json.load(open(f"{out}/summary.json"))
raw = open(f"{out}/report.html", encoding="utf-8").read()
dom = open(f"{out}/dom.html", encoding="utf-8").read()
console = open(f"{out}/console.log", encoding="utf-8", errors="replace").read()

class Page(html.parser.HTMLParser):
    """Tags, attributes, ids, all text, and the text inside each element with an id."""
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.attrs, self.text = [], {}, [], []
        self.open, self.within = [], {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if "id" in a:
            self.ids[a["id"]] = a
        self.open.append((tag, a.get("id")))
    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break
    def handle_data(self, data):
        self.text.append(data)
        for _, id_ in self.open:
            if id_:
                self.within.setdefault(id_, []).append(data)

page = Page()
page.feed(dom)
fail = []
def expect(ok, what):
    if not ok:
        fail.append(what)
def within(id_):
    return "".join(page.within.get(id_, []))

t = summary["totals"]
for id_, want in [("total-keys", t["keys"]), ("total-memory", t["memory_bytes"]),
                  ("total-serialized", t["serialized_bytes"]),
                  ("keys-without-ttl", t["keys_without_ttl"]),
                  ("slots-with-keys", summary["cluster"]["slots_with_keys"])]:
    got = page.ids.get(id_, {}).get("data-v")
    expect(got == str(want), f"{id_}: page {got}, summary.json {want}")
used = [f["used_mem"] for f in summary["files"]]
if all(u is not None for u in used):
    got = page.ids.get("used-mem", {}).get("data-v")
    expect(got == str(sum(used)), f"used-mem: page {got}, summary.json {sum(used)}")
text = "".join(page.text)
top = summary["prefixes"]["depths"][0]["rows"][0]["name"]
expect(top in within("prefix-tree"), f"top prefix {top!r} not in the prefix tree")
expect(top in within("prefixes-1"), f"top prefix {top!r} not in the depth-1 table")
pattern = summary["patterns"]["rows"][0]["name"]
expect(pattern in within("patterns"), f"top pattern {pattern!r} not in the pattern table")
for k in summary["top_keys"]["by_memory"][:5]:
    expect(k["key"] in within("top-keys"), f"top key {k['key']!r} not in the top-keys table")
for section in ["headline", "types", "prefixes", "ttl", "keys", "sizes", "cluster", "lint"]:
    expect(section in page.ids, f"no section {section}")
expect(("files" in page.ids) == (len(summary["files"]) > 1), "per-file section iff several files")
if summary["totals"]["keys_with_ttl"]:
    expect("ttl-curve" in page.ids, "no TTL curve")
for id_, present in [("lru", summary["lru_idle_seconds"]), ("lfu", summary["lfu_frequency"])]:
    expect((id_ in page.ids) == (present is not None), f"{id_} histogram iff summary.json has it")
expect(page.tags.count("script") == 1, f"{page.tags.count('script')} script elements, want 1")
for tag in ["img", "iframe", "object", "embed", "link", "image", "use", "foreignobject"]:
    expect(tag not in page.tags, f"a <{tag}> element")
expect(not any(k.startswith("on") for k, _ in page.attrs), "an on* event attribute")
expect(not any(k in ("src", "href") and not v.startswith("#") for k, v in page.attrs),
       "a src/href that is not an in-page anchor")
expect(not re.search(r'(src|href|action)\s*=\s*["\']?\s*(https?:)?//', raw, re.I),
       "a src/href naming a network URL")
expect(not re.search(r"https?://", raw), "an http(s):// URL in the file")
requests = open(f"{out}/requests.txt").read().split()
expect(not requests, f"the page requested {requests[:3]}")
expect(not re.search(r"Uncaught|SyntaxError|TypeError|ReferenceError", console),
       "a script error: " + "; ".join(l for l in console.splitlines() if "CONSOLE" in l)[:300])
expect(len(raw) < 3_000_000, f"{len(raw)} bytes, want < 3 MB")
acted = re.search(r"<body([^>]*)>", open(f"{out}/interact-dom.html", encoding="utf-8").read())
acted = {k: html.unescape(v) for k, v in re.findall(r'data-(\w+)="([^"]*)"', acted.group(1) if acted else "")}
expect(acted.get("zoomed") == "999.00", f"zoom: clicked prefix is {acted.get('zoomed')} wide, want 999.00")
expect(acted.get("root") == "999.00", f"zoom: root is {acted.get('root')} wide, want 999.00")
expect(acted.get("info", "").startswith(top[:100]),
       f"zoom: info line {acted.get('info')!r}, want the prefix {top!r}")
expect(acted.get("sorted") == "true", "sorting the top keys by memory did not order them")
expect(acted.get("shown", "0") != "0", f"filter: {acted.get('shown')} of {acted.get('rows')} rows shown")
# The demo has several rules; a page may have one (open) or none.
expect(acted.get("ruleopen") in (("true",) if name == "demo" else ("true", "none")),
       f"a lint rule's link left its closed findings closed ({acted.get('ruleopen')})")
if name == "hostile":
    for key in ["</script><img src=x onerror=alert(1)>", "<script>alert(2)</script>:k"]:
        expect(key in text, f"key {key!r} not shown as text")
        expect(key in within("baseline"), f"key {key!r} not in the since-baseline section as text")
    expect("<script>alert(2)</script>" in within("prefix-tree"), "markup prefix not in the tree as text")
    expect("</title><b>tag" in within("hash-tags"), "markup hash tag not shown as text")
try:
    d = json.load(open(f"{out}/diff-cli.json"))
except FileNotFoundError:
    d = None
expect((d is not None) == ("baseline" in page.ids), "a since-baseline section iff a baseline")
if d is not None:
    class Tables(html.parser.HTMLParser):
        """The cell texts of each row of each table with an id."""
        def __init__(self):
            super().__init__()
            self.tables, self.table, self.cell = {}, None, None
        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.table = self.tables.setdefault(dict(attrs).get("id"), [])
            elif tag == "tr" and self.table is not None:
                self.table.append([])
            elif tag in ("td", "th") and self.table is not None:
                self.cell = []
        def handle_endtag(self, tag):
            if tag in ("td", "th") and self.cell is not None:
                self.table[-1].append("".join(self.cell))
                self.cell = None
            elif tag == "table":
                self.table = None
        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)
    tables = Tables()
    tables.feed(dom)
    def rows(id_):
        return tables.tables.get(id_, [])[1:]  # without the header
    def signed(v):
        return f"+{v}" if v > 0 else str(v)
    def data_v(id_):
        return page.ids.get(id_, {}).get("data-v")
    for id_, want in [("base-keys", d["totals"]["keys"]["change"]),
                      ("base-memory", d["totals"]["memory_bytes"]["change"]),
                      ("base-serialized", d["totals"]["serialized_bytes"]["change"]),
                      ("base-keys-without-ttl", d["ttl"]["keys_without_ttl"]["change"])]:
        expect(data_v(id_) == str(want), f"{id_}: page {data_v(id_)}, diff {want}")
    lost = d["ttl"]["lost_ttl_keys"]
    expect(data_v("base-lost-ttl") == (None if lost is None else str(lost)),
           f"lost TTL: page {data_v('base-lost-ttl')}, diff {lost}")
    totals = {r[0]: r for r in rows("base-totals")}
    expect(totals.get("keys", [""] * 4)[1:4] == [str(d["totals"]["keys"]["old"]), str(d["totals"]["keys"]["new"]),
           signed(d["totals"]["keys"]["change"])], f"totals keys row {totals.get('keys')}")
    def delta(x):
        if x["within_bounds"]:
            return "within bounds"
        return signed(x["min"]) if x["min"] == x["max"] else None
    groups = [(f"base-prefixes-{g['depth']}", g) for g in d["prefixes"]] + [("base-patterns", d["patterns"])]
    for id_, g in groups:
        counts = [g[k] for k in ("appeared", "vanished", "grew", "shrank", "within_bounds")]
        want = "no change" if sum(counts) == 0 else \
            "{} appeared, {} vanished, {} grew, {} shrank, {} within their error bounds".format(*counts)
        expect(want in within(id_), f"{id_}: {within(id_)[:120]!r}, want {want!r}")
        shown = {r[0]: r for r in rows(f"{id_}-table")}
        listed = {c["name"] or '""': c for k in ("appeared_names", "vanished_names", "growers_by_memory",
                  "shrinkers_by_memory", "growers_by_keys", "shrinkers_by_keys") for c in g[k]}
        expect(set(shown) == set(listed), f"{id_}: page lists {sorted(shown)[:5]}, diff {sorted(listed)[:5]}")
        for n, c in listed.items():
            r = shown.get(n)
            keys = delta(c["keys_change"])
            if r and keys is not None:
                expect(r[4] == keys, f"{id_} {n!r}: keys change {r[4]!r}, diff {keys!r}")
    big = [r[0] for r in rows("base-big-keys")]
    more = [b for b in big if b.startswith("… ")]
    big = [b for b in big if not b.startswith("… ")]
    expect(big == [k["key"] or '""' for k in d["big_keys"]["keys"]][:200], f"big keys: page {big[:3]}")
    omitted = d["big_keys"].get("omitted", 0)
    expect(more == ([f"… {omitted} more"] if omitted else []), f"big keys: page says {more}, diff omits {omitted}")
    classes = {r[0]: r for r in rows("base-ttl-classes")}
    for c in d["ttl"]["classes"] if classes else []:
        got = classes.get(c["bucket"], [""] * 4)[3]
        expect(got == signed(c["keys"]["change"]), f"TTL class {c['bucket']}: {got}, diff {c['keys']['change']}")
    crossings = [(r[0], r[4]) for r in rows("base-crossings")]
    expect(crossings == [(c["pattern"], str(c["keys"])) for c in d["encoding_crossings"]],
           f"crossings: page {crossings}")
    for id_, key in [("base-lint-new", "new"), ("base-lint-resolved", "resolved")]:
        got = [(r[0], r[1]) for r in rows(id_)]
        want = [(f["subject"], f["rule"]) for f in (d["lint"] or {}).get(key, [])][:200]
        expect(got == want, f"{id_}: page {got[:3]}, diff {want[:3]}")
    if name == "demo":
        # What the demo's changes must show, whatever the figures.
        depth1 = {r[0]: r[1] for r in rows("base-prefixes-1-table")}
        for prefix, status in [("job", "appeared"), ("legacy", "vanished"), ("cart", "grew")]:
            expect(depth1.get(prefix) == status, f"prefix {prefix}: {depth1.get(prefix)}, want {status}")
        expect(("leaderboard:big", "1") in crossings, f"leaderboard:big crossing not in {crossings}")
        expect(lost is not None and lost >= 1500, f"lost TTL {lost}, want >= 1500 (the carts)")
if fail:
    print(f"check-html: {name}: " + "; ".join(fail), file=sys.stderr)
    sys.exit(1)
print(f"check-html: {name}: ok ({len(raw)} bytes, {t['keys']} keys, top prefix {top!r})")
PY
}

# Window sizes of the section screenshots (the demo's sections fit; longer ones are cut).
size() {
    case $1 in
        headline) echo 1100,520 ;; types) echo 1100,900 ;; prefixes) echo 1100,760 ;;
        ttl) echo 1100,1000 ;; keys) echo 1100,720 ;; sizes) echo 1100,620 ;;
        cluster) echo 1100,760 ;; files) echo 1100,420 ;; baseline) echo 1100,1500 ;;
        *) echo 1100,700 ;;
    esac
}

check fixture page testdata/real/redis-7.4.1-alltypes-lru.rdb
check shards sections testdata/real/redis-7.4.1-cluster.rdb testdata/modern/valkey-9.1.2-alltypes-lfu.rdb
check hostile page --baseline testdata/real/redis-7.4.1-alltypes-lru.rdb "$work/dumps/hostile.rdb"
check demo sections --baseline "$work/dumps/demo-old.rdb" "$work/dumps/demo.rdb"
if [ -n "${SCREENSHOTS:-}" ]; then
    for id in "${sections[@]}"; do
        if [ -f "$work/report-demo/$id.png" ]; then cp "$work/report-demo/$id.png" "$SCREENSHOTS/report-$id.png"; fi
    done
    cp "$work/report-shards/files.png" "$SCREENSHOTS/report-files.png"
    echo "check-html: section screenshots copied to $SCREENSHOTS"
fi
echo "check-html: reports and section screenshots in $work/report-{fixture,shards,hostile,demo}/"
