#!/usr/bin/python3
"""An OpenAI-compatible server whose replies are faults chosen by the unit key, for
test_engine_faults.sh. Each request's X-Tally-Key header (tally's "key_header": true) names the
unit; the item id picks what the server answers:

  ...2000.*  a reply that is not valid UTF-8          ...2001.*  content holding \\u0000
  ...2002.*  a reply nested 5,000 levels deep         mazenav.tqa.0.*  a 2 MB reply
  mazenav.tqa.1.*  HTTP 500 with the same words each time
  mazenav.tqa.2.*  content null                       spatialgrid.tqa.0.*  HTTP 400 echoing the key
  spatialgrid.tqa.1.*  an answer that echoes the key  anything else: "Answer: A"

GET PATH answers 200 only for --health, and /props ({"total_slots": N}, with --slots N) and
/v1/models (one model, "served-model"); others 404. Counts per key go to --stats FILE at
SIGTERM and on every request (JSON {key: requests}). --tls CERT KEY serves HTTPS.
usage: faultserver.py --port-file F [--health /ready] [--stats F] [--tls CERT KEY]"""
import json
import signal
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = sys.argv[1:]
opt = {"--health": "/health", "--stats": None, "--port-file": None, "--slots": None}
tls = None
i = 0
while i < len(args):
    if args[i] == "--tls":
        tls = (args[i + 1], args[i + 2])
        i += 3
    else:
        opt[args[i]] = args[i + 1]
        i += 2
counts = {}
lock = threading.Lock()


def completion(content_json):
    return ('{"id":"chatcmpl-x","object":"chat.completion","model":"m","choices":[{"index":0,'
            '"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],'
            '"usage":{"prompt_tokens":3,"completion_tokens":2}}' % content_json).encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/props" and opt["--slots"]:
            self.send(200, json.dumps({"total_slots": int(opt["--slots"]), "n_ctx": 4096}).encode())
        elif self.path == "/v1/models":
            self.send(200, b'{"object":"list","data":[{"id":"served-model","object":"model"}]}')
        else:
            self.send(200 if self.path == opt["--health"] else 404, b'{"status":"ok"}')

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        key = self.headers.get("X-Tally-Key", "")
        auth = self.headers.get("Authorization", "")
        with lock:
            counts[key] = counts.get(key, 0) + 1
            if opt["--stats"]:
                with open(opt["--stats"] + ".tmp", "w") as f:
                    json.dump(counts, f)
                import os
                os.replace(opt["--stats"] + ".tmp", opt["--stats"])
        item = key.split("/")[1] if "/" in key else ""
        if item.startswith("spatialmap.tqa.2000."):
            self.send(200, completion('"Answer: \xff\xfe A"').replace(b"\xc3\xbf\xc3\xbe", b"\xff\xfe"))
        elif item.startswith("spatialmap.tqa.2001."):
            self.send(200, completion('"Answer: A\\u0000 and more"'))
        elif item.startswith("spatialmap.tqa.2002."):
            self.send(200, b"[" * 5000 + b"]" * 5000)
        elif item.startswith("mazenav.tqa.0."):
            self.send(200, completion(json.dumps("A" * 2_000_000)))
        elif item.startswith("mazenav.tqa.1."):
            self.send(500, b'{"error":{"code":500,"message":"Only one completion choice is allowed","type":"server_error"}}')
        elif item.startswith("mazenav.tqa.2."):
            self.send(200, completion("null"))
        elif item.startswith("spatialgrid.tqa.0."):
            self.send(400, json.dumps({"error": {"message": "bad header: " + auth}}).encode())
        elif item.startswith("spatialgrid.tqa.1."):
            self.send(200, completion(json.dumps("Answer: A (you sent " + auth + ")")))
        else:
            self.send(200, completion('"Answer: A"'))


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.handle_error = lambda *a: None  # clients that stop reading (an oversized reply) are expected
if tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls[0], tls[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
with open(opt["--port-file"] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.replace(opt["--port-file"] + ".tmp", opt["--port-file"])
try:
    srv.serve_forever()
except KeyboardInterrupt:
    pass
