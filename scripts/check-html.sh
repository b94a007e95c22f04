#!/usr/bin/env bash
# Renders report.html in headless Chromium (Debian's `chromium`, installed when missing) for a
# testdata fixture and for a dump whose keys are markup, and checks the rendered DOM: the
# headline numbers equal summary.json's, the top prefix is shown, no element came from a key's
# text, no http(s) URL is loaded; saves a screenshot of each. Usage: scripts/check-html.sh [BIN]
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
    rm -rf "$work/hostile" "$work/chrome"  # the reports and screenshots stay
}
trap cleanup EXIT

# A dump whose keys, prefix and value are markup, saved by a real redis-server.
mkdir -p "$work/hostile"
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --dir "$work/hostile" --dbfilename hostile.rdb \
    --save '' --appendonly no --daemonize no >"$work/hostile/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
hostile='</script><img src=x onerror=alert(1)>'
redis-cli -p "$port" set "$hostile" v >/dev/null
redis-cli -p "$port" set "<script>alert(2)</script>:k" v >/dev/null
redis-cli -p "$port" hset "\"><svg onload=alert(3)>:h" f "</style><img src=y>" >/dev/null
redis-cli -p "$port" set "user:1" "&amp; \u2028" >/dev/null
redis-cli -p "$port" save >/dev/null
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=

check() {
    local name=$1 dump=$2 out="$work/report-$1"
    "$bin" report "$dump" --out-dir "$out" -q >/dev/null
    chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
        --dump-dom "file://$out/report.html" 2>/dev/null >"$out/dom.html"
    chromium --headless --disable-gpu --no-sandbox --user-data-dir="$work/chrome" \
        --window-size=1280,2400 --screenshot="$out/screenshot.png" \
        "file://$out/report.html" >/dev/null 2>&1
    [ -s "$out/screenshot.png" ] || { echo "check-html: $name: no screenshot" >&2; exit 1; }
    "$python" - "$out" "$name" <<'PY'
import html.parser, json, re, sys
out, name = sys.argv[1], sys.argv[2]
summary = json.load(open(f"{out}/summary.json"))
raw = open(f"{out}/report.html", encoding="utf-8").read()
dom = open(f"{out}/dom.html", encoding="utf-8").read()

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.attrs, self.text = [], {}, [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if "id" in a:
            self.ids[a["id"]] = a
    def handle_data(self, data):
        self.text.append(data)

page = Page()
page.feed(dom)
fail = []
def expect(ok, what):
    if not ok:
        fail.append(what)

t = summary["totals"]
for id_, want in [("total-keys", t["keys"]), ("total-memory", t["memory_bytes"]),
                  ("total-serialized", t["serialized_bytes"]),
                  ("keys-without-ttl", t["keys_without_ttl"])]:
    got = page.ids.get(id_, {}).get("data-v")
    expect(got == str(want), f"{id_}: page {got}, summary.json {want}")
used = [f["used_mem"] for f in summary["files"]]
if all(u is not None for u in used):
    got = page.ids.get("used-mem", {}).get("data-v")
    expect(got == str(sum(used)), f"used-mem: page {got}, summary.json {sum(used)}")
text = "".join(page.text)
top = summary["prefixes"]["depths"][0]["rows"][0]["name"]
expect(top in text, f"top prefix {top!r} not shown")
expect(page.tags.count("script") == 1, f"{page.tags.count('script')} script elements, want 1")
expect("img" not in page.tags, "an <img> element")
expect(page.tags.count("svg") == 2, f"{page.tags.count('svg')} svg elements, want 2 (the charts)")
expect(not any(k.startswith("on") for k, _ in page.attrs), "an on* event attribute")
expect(not re.search(r'(src|href|action)\s*=\s*["\']?\s*(https?:)?//', raw, re.I),
       "a src/href naming a network URL")
expect(not re.search(r"https?://", raw), "an http(s):// URL in the file")
if name == "hostile":
    for key in ["</script><img src=x onerror=alert(1)>", "<script>alert(2)</script>:k"]:
        expect(key in text, f"key {key!r} not shown as text")
if fail:
    print(f"check-html: {name}: " + "; ".join(fail), file=sys.stderr)
    sys.exit(1)
print(f"check-html: {name}: ok ({len(raw)} bytes, {t['keys']} keys, top prefix {top!r})")
PY
}

check fixture testdata/real/redis-7.0.15-alltypes.rdb
check hostile "$work/hostile/hostile.rdb"
echo "check-html: screenshots in $work/report-fixture/screenshot.png and $work/report-hostile/screenshot.png"
