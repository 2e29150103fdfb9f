"""Headless Chromium driven over its DevTools protocol, to ask it how it drew a page: which fonts
drew an element's text (CSS.getPlatformFontsForNode) and what a part of the page looks like
(Page.captureScreenshot).

The protocol runs over a pair of pipes (--remote-debugging-pipe: Chromium reads commands on its
file descriptor 3 and answers on 4, each message JSON ended by a NUL byte), so no port is opened and
no websocket library is needed. `hidden_fonts_config` writes a fontconfig file that hides chosen
font files from a browser started with it (FONTCONFIG_FILE), for the same page drawn without them.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-pipe"]


def hidden_fonts_config(folder: Path, font_files: list[str]) -> Path:
    """A fontconfig file: the system's configuration, less the given font files."""
    globs = "".join(f"<glob>{file}</glob>" for file in font_files)
    path = folder / "fonts.conf"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>'
                    '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
                    f"<selectfont><rejectfont>{globs}</rejectfont></selectfont></fontconfig>\n", encoding="utf-8")
    return path


class Browser:
    """One headless Chromium with one page; `call` sends a command to that page and returns its result."""

    def __init__(self, chromium: str, user_data: Path, env: dict | None = None, size=(1200, 1600), timeout=60.0):
        commands_in, self._commands = os.pipe()
        self._answers, answers_out = os.pipe()

        def wire():  # in the child: the pipes become its descriptors 3 and 4 (dup2 makes them inheritable)
            ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_in, answers_out)]
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.log = user_data.with_suffix(".log")
        user_data.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [chromium, *FLAGS, f"--user-data-dir={user_data}", f"--window-size={size[0]},{size[1]}",
                 "about:blank"], stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                preexec_fn=wire, close_fds=False)
        os.close(commands_in)
        os.close(answers_out)
        self.timeout, self._buffer, self._next_id, self.events = timeout, b"", 0, []
        self.session = None
        page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "DOM", "CSS"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise TimeoutError(f"Chromium did not answer in {self.timeout:.0f} s; its log: {self.log}")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise EOFError(f"Chromium closed its pipe; its log: {self.log}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str) -> None:
        """Load `url` and wait for its load event (its images decoded)."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        while not any(event.get("method") == "Page.loadEventFired" for event in self.events):
            self.events.append(self._read())

    def texts(self) -> list[tuple[int, str]]:
        """(node id, its own text) of every element whose own text nodes say something."""
        found = []

        def walk(node):
            own = "".join(child.get("nodeValue", "") for child in node.get("children", ()) if child["nodeType"] == 3)
            if node["nodeType"] == 1 and own.strip() and node["nodeName"].lower() not in ("style", "script", "title"):
                found.append((node["nodeId"], own))
            for child in node.get("children", ()):
                walk(child)

        walk(self.call("DOM.getDocument", depth=-1, pierce=True)["root"])
        return found

    def fonts(self, node_id: int) -> list[dict]:
        """The platform fonts that drew the node's text: familyName, glyphCount, ..."""
        return self.call("CSS.getPlatformFontsForNode", nodeId=node_id)["fonts"]

    def box(self, selector: str) -> dict:
        """The page's box (x, y, width, height) of the first element `selector` finds."""
        root = self.call("DOM.getDocument", depth=0)["root"]["nodeId"]
        node = self.call("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        quad = self.call("DOM.getBoxModel", nodeId=node)["model"]["border"]
        xs, ys = quad[0::2], quad[1::2]
        return {"x": min(xs), "y": min(ys), "width": max(xs) - min(xs), "height": max(ys) - min(ys)}

    def screenshot(self, clip: dict | None = None) -> bytes:
        """PNG of the viewport, or of `clip` (a box of the page)."""
        params = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])

    def close(self) -> None:
        self.session = None  # Browser.close is the browser's command, not the page's
        try:
            self.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError, EOFError):
            pass
        for fd in (self._commands, self._answers):
            os.close(fd)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # only this process, started here
            self.process.kill()
            self.process.wait()
