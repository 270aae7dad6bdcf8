"""Print a .docx file's paragraphs as plain text, one per line."""

from __future__ import annotations

import sys
import zipfile
from xml.etree import ElementTree

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

with zipfile.ZipFile(sys.argv[1]) as archive:
    root = ElementTree.fromstring(archive.read("word/document.xml"))
for paragraph in root.iter(f"{W}p"):
    print("".join(node.text or "" for node in paragraph.iter(f"{W}t")))
