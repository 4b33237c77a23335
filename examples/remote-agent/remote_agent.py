#!/usr/bin/env python3
"""A remote AgentMail agent in plain Python 3: standard library only (SPEC G-40).

It registers with the Gateway, heartbeats every 30 s, holds the SSE event stream (reconnecting
with Last-Event-ID), reads its inbox and answers every new mail with "received: <subject>",
then marks the mail read.

Configuration (environment):
    AGENTMAIL_GATEWAY_URL   e.g. http://127.0.0.1:8787
    AGENTMAIL_AGENT_NAME    the agent name the key is bound to
    AGENTMAIL_AGENT_KEY     the key from `agentmail agent key <name>`

Usage:
    python3 remote_agent.py [--once N] [--heartbeat-seconds S] [--platform NAME] [--timeout S]
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

API_PREFIX = "/api/v1"
VERSION = "remote_agent.py/1"
REQUEST_TIMEOUT_S = 30
# The Gateway sends a keep-alive comment every 15 s; a stream silent for longer is dead.
STREAM_READ_TIMEOUT_S = 60
RECONNECT_MAX_DELAY_S = 30
INBOX_PAGE = 20
# The Gateway's subject limit, counted as JavaScript counts a string's length (UTF-16 units).
SUBJECT_MAX_UTF16 = 500


def log(message):
    print(f"[remote-agent] {message}", file=sys.stderr, flush=True)


class ApiError(Exception):
    """A non-2xx answer: status plus the Gateway's {error, detail, suggestion} (SPEC G-13)."""

    def __init__(self, status, body):
        self.status = status
        self.body = body
        super().__init__(f"HTTP {status} {body.get('error', '')}: {body.get('detail', '')}")

    @property
    def transient(self):
        # Retry later on 5xx, 408 and 429; every other 4xx will never succeed as sent.
        return self.status >= 500 or self.status in (408, 429)


def api_error(err):
    """Turn urllib's HTTPError into an ApiError carrying the Gateway's JSON error body."""
    text = err.read().decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        parsed = {"error": f"http_{err.code}", "detail": text[:500]}
    return ApiError(err.code, parsed)


class Gateway:
    """The few agent routes this example uses, over urllib."""

    def __init__(self, base_url, name, key):
        self.base_url = base_url.rstrip("/")
        self.name = name
        self.key = key

    def _request(self, method, path, body=None, query=None):
        url = self.base_url + API_PREFIX + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_S) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raise api_error(err) from None
        return json.loads(raw) if raw else None

    def register(self, platform):
        return self._request("POST", "/agent/register", {"name": self.name, "platform": platform, "version": VERSION})

    def heartbeat(self):
        # No "sessions"/"models": leaving a field out means "could not read", not "empty" (G-25).
        return self._request("POST", "/agent/heartbeat", {"workspaces": [{"path": os.getcwd()}], "version": VERSION})

    def unread(self):
        return self._request("GET", "/mail/inbox", query={"status": "unread", "limit": INBOX_PAGE})["mails"]

    def mail(self, mail_id):
        return self._request("GET", "/agent/mail/" + urllib.parse.quote(mail_id, safe=""))["mail"]

    def send(self, body):
        return self._request("POST", "/mail/send", body)

    def mark_read(self, ids):
        return self._request("POST", "/mail/read", {"ids": ids})

    def offline(self):
        # A client that stops says so: the agent is offline at once, not 90 s later (SPEC H-3).
        return self._request("POST", "/agent/offline", {"reason": "stopped"})

    def open_events(self, last_event_id):
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        req = urllib.request.Request(self.base_url + API_PREFIX + "/events", headers=headers)
        try:
            return urllib.request.urlopen(req, timeout=STREAM_READ_TIMEOUT_S)
        except urllib.error.HTTPError as err:
            raise api_error(err) from None


def sse_events(resp):
    """Yield (id, event, data) for every frame of an SSE response (text/event-stream rules).

    readline() returns whole lines, so a multi-byte character is never cut in two.
    """
    event_id, event_type, data = None, "message", []
    while True:
        raw = resp.readline()
        if not raw:
            return  # the server closed the stream
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield event_id, event_type, "\n".join(data)
            event_type, data = "message", []
            continue
        if line.startswith(":"):
            continue  # comment (keep-alive)
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event_type = value
        elif field == "id":
            event_id = value


class Agent:
    def __init__(self, gateway, once, heartbeat_s):
        self.gw = gateway
        self.once = once
        self.heartbeat_s = heartbeat_s
        self.handled = set()
        self.replies = 0
        self.stop = threading.Event()
        self.last_event_id = None

    @staticmethod
    def reply_subject(subject):
        """'Re: <subject>', clipped to the Gateway's limit without splitting a character."""
        full = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        units = full.encode("utf-16-le")[: 2 * SUBJECT_MAX_UTF16]
        return units.decode("utf-16-le", errors="ignore")

    def reply_to(self, summary):
        """Read one mail, answer it, mark it read."""
        mail = self.gw.mail(summary["id"])
        subject = mail["subject"]
        reply_subject = self.reply_subject(subject)
        sent = self.gw.send(
            {
                "to": mail["reply_address"],
                "subject": reply_subject,
                "body": f"received: {subject}",
                "reply_to": mail["id"],
            }
        )
        self.gw.mark_read([mail["id"]])
        log(f"answered {mail['id']} from {mail['from_name']} as {sent.get('mail_id')}")

    def process_inbox(self):
        """Answer every unread mail not handled yet, oldest first."""
        for summary in sorted(self.gw.unread(), key=lambda m: m["created_at"]):
            if summary["id"] in self.handled or self.stop.is_set():
                continue
            if summary.get("is_permission"):
                self.handled.add(summary["id"])
                continue
            try:
                self.reply_to(summary)
            except ApiError as err:
                if err.transient:
                    log(f"will retry {summary['id']} later: {err}")
                    continue
                log(f"giving up on {summary['id']}: {err} {err.body.get('suggestion', '')}")
            self.handled.add(summary["id"])
            self.replies += 1
            if self.once is not None and self.replies >= self.once:
                log(f"handled {self.replies} mail(s), exiting (--once)")
                self.stop.set()
                return

    def heartbeat_loop(self):
        while not self.stop.wait(self.heartbeat_s):
            try:
                self.gw.heartbeat()
            except (ApiError, OSError) as err:
                log(f"heartbeat failed: {err}")

    def run(self, platform):
        reg = self.gw.register(platform)
        log(f"registered {reg['name']} ({reg['platform']}), created={reg['created']}")
        hb = self.gw.heartbeat()
        if hb.get("unknown_fields"):
            log(f"gateway ignored heartbeat fields: {hb['unknown_fields']}")
        threading.Thread(target=self.heartbeat_loop, daemon=True).start()
        delay = 1
        while not self.stop.is_set():
            try:
                with self.gw.open_events(self.last_event_id) as resp:
                    log("event stream open" + (f" after event {self.last_event_id}" if self.last_event_id else ""))
                    delay = 1
                    # Catch up on whatever arrived while we were away (G-39), then follow events.
                    self.process_inbox()
                    if self.stop.is_set():
                        break
                    for event_id, event_type, data in sse_events(resp):
                        if event_id is not None:
                            self.last_event_id = event_id
                        if event_type == "new_mail":
                            log(f"new_mail {json.loads(data).get('mail_id')}")
                            self.process_inbox()
                        if self.stop.is_set():
                            break
            except ApiError as err:
                if not err.transient:
                    log(f"the Gateway refused: {err} {err.body.get('suggestion', '')}")
                    return 1
                log(f"event stream: {err}")
            except (urllib.error.HTTPError, urllib.error.URLError, OSError, socket.timeout) as err:
                log(f"event stream lost: {err}")
            if self.stop.is_set():
                break
            log(f"reconnecting in {delay} s")
            self.stop.wait(delay)
            delay = min(delay * 2, RECONNECT_MAX_DELAY_S)
        return 0


def main(argv):
    parser = argparse.ArgumentParser(description="A stdlib-only AgentMail agent that answers every mail.")
    parser.add_argument("--once", type=int, metavar="N", help="exit after answering N mails")
    parser.add_argument(
        "--heartbeat-seconds",
        type=float,
        default=float(os.environ.get("AGENTMAIL_HEARTBEAT_SECONDS", "30")),
        help="heartbeat interval (default 30, env AGENTMAIL_HEARTBEAT_SECONDS)",
    )
    parser.add_argument("--platform", default="python-example", help="platform name to register")
    parser.add_argument("--timeout", type=float, metavar="S", help="give up (exit 1) after S seconds")
    args = parser.parse_args(argv)

    missing = [v for v in ("AGENTMAIL_GATEWAY_URL", "AGENTMAIL_AGENT_NAME", "AGENTMAIL_AGENT_KEY") if not os.environ.get(v)]
    if missing:
        parser.error("set " + ", ".join(missing))

    gateway = Gateway(
        os.environ["AGENTMAIL_GATEWAY_URL"], os.environ["AGENTMAIL_AGENT_NAME"], os.environ["AGENTMAIL_AGENT_KEY"]
    )
    agent = Agent(gateway, args.once, args.heartbeat_seconds)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.timeout is not None:

        def give_up():
            log(f"no result after {args.timeout} s, giving up")
            os._exit(1)

        timer = threading.Timer(args.timeout, give_up)
        timer.daemon = True
        timer.start()
    try:
        return agent.run(args.platform)
    except ApiError as err:
        log(f"the Gateway refused: {err} {err.body.get('suggestion', '')}")
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        try:
            gateway.offline()
            log("said goodbye: offline")
        except Exception:  # best effort: an older Gateway, or one that is gone
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
