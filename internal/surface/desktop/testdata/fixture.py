#!/usr/bin/python3
"""The conformance fixture app of internal/surface/surfacetest as a native
GTK 3 application: the desktop adapter reads it over AT-SPI and acts on it
through AT-SPI's Action, EditableText and Selection interfaces.

Usage: fixture.py [--rename OLD=NEW]... URL

URL names the page to open (".../main.html", ".../second.html",
".../frames.html", ".../secret.html" with a password field "PIN", for
the screenshot mask, or ".../signon.html", a PIN and a "Sign on" button that
opens the main page once a PIN is typed); the application announces the document it shows as the
accessible description of its main window, the way a browser names its
document. Windows play the part of frames: page "frames" opens two more
windows titled "nav" and "content". --rename relabels a button (the
"renamed button" drift case).
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Atk", "1.0")
from gi.repository import Atk, Gtk  # noqa: E402

TITLES = {"main": "Conformance", "second": "Second", "frames": "Frames", "secret": "Secret", "signon": "Sign on"}


class Fixture:
    def __init__(self, url, renames):
        # a capability's entrypoint is "{base_url}/": ".../signon.html/"
        self.base = url.rstrip("/").rsplit("/", 1)[0]
        self.renames = renames
        self.extra = []
        self.win = Gtk.Window()
        self.win.set_default_size(480, 360)
        self.win.move(0, 0)
        self.win.connect("destroy", Gtk.main_quit)
        self.box = None
        self.status = None
        self.show(url)

    def label(self, text):
        return self.renames.get(text, text)

    def url(self, page):
        return self.base + "/" + page + ".html"

    def show(self, url):
        page = url.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0]
        if page not in TITLES:
            page = "main"
        for w in self.extra:
            w.destroy()
        self.extra = []
        if self.box is not None:
            self.win.remove(self.box)
        self.box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
        self.win.add(self.box)
        self.win.set_title(TITLES[page])
        self.win.get_accessible().set_description(url)
        self.box.pack_start(heading(TITLES[page]), False, False, 0)
        getattr(self, "page_" + page)()
        self.win.show_all()

    def page_main(self):
        self.name = Gtk.Entry()
        self.name.get_accessible().set_name("Name")
        self.name.connect("activate", self.greet)
        self.color = Gtk.ComboBoxText()
        for c in ("Red", "Green", "Blue"):
            self.color.append_text(c)
        self.color.set_active(0)
        self.color.get_accessible().set_name("Color")
        for w in (self.name, self.color):
            self.box.pack_start(w, False, False, 0)
        self.button("Greet", self.greet)
        self.button("Ask", self.ask)
        locked = self.button("Locked", lambda *_: self.say("Unlocked"))
        locked.set_sensitive(False)
        self.link("Next", "second")
        self.status = status(self.box)

    def page_secret(self):
        pin = Gtk.Entry()
        pin.set_visibility(False)
        pin.get_accessible().set_name("PIN")
        self.box.pack_start(pin, False, False, 0)

    def page_signon(self):
        pin = Gtk.Entry()
        pin.set_visibility(False)
        pin.get_accessible().set_name("PIN")
        self.box.pack_start(pin, False, False, 0)
        self.button("Sign on", lambda *_: self.show(self.url("main")) if pin.get_text() else None)

    def page_second(self):
        self.link("Back", "main")

    def page_frames(self):
        for i, name in enumerate(("nav", "content")):
            w = Gtk.Window(title=name)
            w.set_default_size(200, 100)
            w.move(500, i * 140)
            box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
            w.add(box)
            st = None
            b = Gtk.Button(label=self.label("Open"))
            box.pack_start(b, False, False, 0)
            st = status(box)
            b.connect("clicked", lambda _b, st=st, name=name: set_status(st, "Opened " + name))
            w.show_all()
            self.extra.append(w)

    def button(self, text, handler):
        b = Gtk.Button(label=self.label(text))
        b.connect("clicked", handler)
        self.box.pack_start(b, False, False, 0)
        return b

    def link(self, text, page):
        target = self.url(page)
        b = Gtk.LinkButton(uri=target, label=self.label(text))
        b.get_accessible().set_role(Atk.Role.LINK)  # GTK 3 says "push button"
        b.connect("activate-link", lambda *_: self.follow(target))
        self.box.pack_start(b, False, False, 0)

    def follow(self, target):
        self.show(target)
        return True

    def say(self, text):
        set_status(self.status, text)

    def greet(self, *_):
        self.say("Hello, %s (%s)" % (self.name.get_text(), self.color.get_active_text()))

    def ask(self, *_):
        d = Gtk.MessageDialog(transient_for=self.win, modal=True,
                              message_type=Gtk.MessageType.QUESTION,
                              buttons=Gtk.ButtonsType.OK_CANCEL, text="Proceed?")
        d.connect("response", self.answered)
        d.show_all()

    def answered(self, d, response):
        d.destroy()
        self.say("Confirmed" if response == Gtk.ResponseType.OK else "Cancelled")


def heading(text):
    h = Gtk.Label(label=text)
    h.get_accessible().set_role(Atk.Role.HEADING)
    return h


def status(box):
    st = Gtk.Label(label="")
    st.get_accessible().set_role(Atk.Role.STATUSBAR)
    box.pack_start(st, False, False, 0)
    return st


def set_status(st, text):
    st.set_text(text)
    st.get_accessible().set_name(text)


def main(argv):
    renames, url = {}, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--rename" and args:
            old, _, new = args.pop(0).partition("=")
            renames[old] = new
        else:
            url = a
    if url is None:
        sys.exit("usage: fixture.py [--rename OLD=NEW]... URL")
    Fixture(url, renames)
    Gtk.main()


if __name__ == "__main__":
    main(sys.argv[1:])
