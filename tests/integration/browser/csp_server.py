#!/usr/bin/python3
"""Serves a directory on 127.0.0.1 for the HTML report's browser test.

usage: csp_server.py DIR

/csp/<file> is DIR/<file> sent with the Content-Security-Policy that Jenkins
sends with archived artifacts by default; /plain/<file> is the same file
without it. Prints the port it listens on, then serves until killed.
"""
import functools
import http.server
import sys

JENKINS_DEFAULT_CSP = "sandbox allow-same-origin; default-src 'none'; img-src 'self'; style-src 'self';"
PREFIXES = ("/csp/", "/plain/")


class Handler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path):
        for prefix in PREFIXES:
            if path.startswith(prefix):
                return super().translate_path("/" + path[len(prefix):])
        return super().translate_path("/nonexistent/")

    def end_headers(self):
        if self.path.startswith("/csp/"):
            self.send_header("Content-Security-Policy", JENKINS_DEFAULT_CSP)
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args):
        pass


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    handler = functools.partial(Handler, directory=argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
