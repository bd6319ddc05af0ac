"""The look: Fusion with a light palette and one style sheet for the panels and chips."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

ACCENT = "#2f6fed"

STYLE_SHEET = """
QMainWindow, QDialog { background: #f4f5f7; }
QToolBar { background: #ffffff; border: none; border-bottom: 1px solid #e1e4e8;
           spacing: 4px; padding: 4px 6px; }
QToolBar QToolButton { padding: 4px 8px; border-radius: 6px; color: #24292f; }
QToolBar QToolButton:hover { background: #eef1f5; }
QToolBar QToolButton:checked { background: #e3ebfd; color: #1d4ed8; }
QToolBar QLineEdit#pageEdit { max-width: 56px; padding: 3px 6px; border: 1px solid #d0d7de;
           border-radius: 6px; background: #ffffff; }
QLabel#pageCount, QLabel#zoomLabel { color: #57606a; padding: 0 4px; }
QStatusBar { background: #ffffff; border-top: 1px solid #e1e4e8; color: #57606a; }
QDockWidget { font-weight: 600; }
QDockWidget::title { background: #ffffff; padding: 6px 10px; border-bottom: 1px solid #e1e4e8; }
QTabWidget::pane { border: none; background: #f7f8fa; }
QTabBar::tab { padding: 6px 14px; background: transparent; border: none; color: #57606a; }
QTabBar::tab:selected { color: #1d4ed8; border-bottom: 2px solid #2f6fed; }

QFrame#panelHeader { background: #ffffff; border-bottom: 1px solid #e1e4e8; }
QLabel#panelTitle { font-size: 15px; font-weight: 700; color: #1f2328; }
QLabel#panelSubtitle, QLabel#hintText, QLabel#metaText { color: #6e7781; }
QLabel#sectionTitle { font-weight: 700; color: #57606a; text-transform: uppercase;
           padding: 4px 2px; }
QLabel#emptyHint { color: #8c959f; padding: 24px 12px; }
QLabel#errorText { color: #b42318; }
QLabel#statusText[state="good"] { color: #1e7a46; }
QLabel#statusText[state="bad"] { color: #b42318; }

QScrollArea#chatScroll, QWidget#chatHost { background: #f4f5f7; border: none; }
QFrame#answerCard { background: #ffffff; border: 1px solid #e3e6eb; border-radius: 10px; }
QLabel#questionText { font-weight: 700; color: #1f2328; }
QLabel#quoteSmall { color: #57606a; font-style: italic; border-left: 3px solid #c9d8ff;
           padding-left: 8px; }
QLabel#answerText { color: #24292f; font-size: 13px; }
QLabel#answerText[state="error"] { color: #b42318; }
QLabel#answerText[state="stopped"] { color: #6e7781; }
QLabel#answerText[state="stage"] { color: #6e7781; font-style: italic; }
QLabel#warningText { color: #9a5b00; background: #fff8e6; border-radius: 6px; padding: 4px 8px; }

QLabel#badge { border-radius: 9px; padding: 2px 8px; font-size: 11px; font-weight: 600; }
QLabel#badge[kind="mode"] { background: #eef2ff; color: #3b4cca; }
QLabel#badge[kind="good"] { background: #e6f6ec; color: #1e7a46; }
QLabel#badge[kind="warn"] { background: #fff4e0; color: #9a5b00; }
QLabel#badge[kind="bad"] { background: #fdecec; color: #b42318; }

QPushButton#citationChip { background: #eaf1ff; color: #1d4ed8; border: 1px solid #c9d8ff;
           border-radius: 11px; padding: 3px 10px; font-size: 11px; }
QPushButton#citationChip:hover { background: #dbe7ff; }
QPushButton#citationChip[verified="false"] { background: #f3f4f6; color: #57606a;
           border: 1px dashed #b8bfc8; }
QPushButton#linkButton { border: none; color: #2f6fed; background: transparent; padding: 2px; }
QPushButton#linkButton:disabled { color: #b8bfc8; }

QFrame#quoteFrame { background: #f0f5ff; border-top: 1px solid #c9d8ff; }
QLabel#quoteTitle { font-weight: 700; color: #1d4ed8; }
QLabel#quoteText { color: #24292f; font-style: italic; }
QToolButton#quoteClose { border: none; color: #57606a; }
QPushButton#segment { border: 1px solid #c9d8ff; background: #ffffff; color: #1d4ed8;
           padding: 3px 10px; }
QPushButton#segment:checked { background: #2f6fed; color: #ffffff; }
QPushButton#segment:disabled { color: #9aa4b2; }
QPushButton#suggestion { border: 1px solid #d0d7de; background: #ffffff; border-radius: 11px;
           padding: 2px 10px; color: #24292f; font-size: 11px; }
QPushButton#suggestion:hover { background: #eef1f5; }

QFrame#inputFrame { background: #ffffff; border-top: 1px solid #e1e4e8; }
QPlainTextEdit#questionEdit { border: 1px solid #d0d7de; border-radius: 8px; padding: 4px;
           background: #ffffff; }
QPlainTextEdit#questionEdit:focus { border: 1px solid #2f6fed; }
QPushButton#primaryButton { background: #2f6fed; color: #ffffff; border: none;
           border-radius: 8px; padding: 6px 16px; font-weight: 600; }
QPushButton#primaryButton:hover { background: #1d5bd8; }
QPushButton#primaryButton:disabled { background: #a9c1f5; }
QPushButton#primaryButton[danger="true"] { background: #d92d20; }
QPushButton#smallButton { padding: 3px 10px; border: 1px solid #d0d7de; border-radius: 6px;
           background: #ffffff; }
QPushButton#smallButton:hover { background: #eef1f5; }

QListWidget#bookList, QListWidget#recentList, QTreeWidget#tocTree { border: none;
           background: transparent; outline: none; }
QListWidget#bookList::item { border-radius: 8px; margin: 2px 0; }
QListWidget#bookList::item:selected { background: #e3ebfd; }
QListWidget#recentList::item { padding: 4px 6px; color: #24292f; }
QTreeWidget#tocTree::item { padding: 3px 0; }
QTreeWidget#tocTree::item:selected { background: #e3ebfd; color: #1d4ed8; }
QScrollArea#bookScroll, QWidget#bookHost { background: transparent; border: none; }
QFrame#bookRow { background: transparent; border-radius: 8px; }
QFrame#bookRow:hover { background: #eef1f5; }
QFrame#bookRow[current="true"] { background: #e3ebfd; }
QLabel#bookTitle { font-weight: 600; color: #1f2328; }
QLabel#bookStatus { color: #57606a; font-size: 11px; }
QLabel#bookStatus[state="failed"] { color: #b42318; }
QLabel#bookStatus[state="ready"] { color: #1e7a46; }
QProgressBar#ingestProgress { border: none; background: #e1e4e8; border-radius: 3px; }
QProgressBar#ingestProgress::chunk { background: #2f6fed; border-radius: 3px; }

QFrame#findBar { background: #ffffff; border-bottom: 1px solid #e1e4e8; }
QFrame#findBar QLineEdit { border: 1px solid #d0d7de; border-radius: 6px; padding: 3px 6px; }
QGroupBox { font-weight: 700; border: 1px solid #e1e4e8; border-radius: 8px; margin-top: 12px;
           padding: 10px 10px 8px 10px; background: #ffffff; }
QGroupBox::title { subcontrol-origin: margin; left: 10px; padding: 0 4px; color: #57606a; }
QScrollBar:vertical { background: transparent; width: 11px; margin: 2px; }
QScrollBar:horizontal { background: transparent; height: 11px; margin: 2px; }
QScrollBar::handle:vertical { background: #c3c9d2; border-radius: 3px; min-height: 32px; }
QScrollBar::handle:horizontal { background: #c3c9d2; border-radius: 3px; min-width: 32px; }
QScrollBar::handle:hover { background: #9aa4b2; }
QScrollBar::add-line, QScrollBar::sub-line { width: 0; height: 0; }
QScrollBar::add-page, QScrollBar::sub-page { background: transparent; }
QAbstractScrollArea#readerView QScrollBar::handle:vertical { background: #9aa1ad; }
QLabel#badge[kind="neutral"] { background: #eef1f5; color: #57606a; }
QLabel#citeMarker { color: #1d4ed8; }
QMenu { background: #ffffff; border: 1px solid #d0d7de; padding: 4px; }
QMenu::item { padding: 6px 22px; border-radius: 4px; }
QMenu::item:selected { background: #e3ebfd; color: #1d4ed8; }
QMenu::separator { height: 1px; background: #e1e4e8; margin: 4px 8px; }
"""


def apply_style(app: QApplication) -> None:
    """Fusion, a light palette and the style sheet, the same on every platform."""
    app.setStyle("Fusion")
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, QColor("#f4f5f7"))
    pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor("#f6f8fa"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.WindowText, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.Button, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ButtonText, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.Highlight, QColor(ACCENT))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8c959f"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.ToolTipText, QColor("#ffffff"))
    app.setPalette(pal)
    font = QFont(app.font())
    if font.pointSizeF() < 9.5:
        font.setPointSizeF(9.5)
    app.setFont(font)
    app.setStyleSheet(STYLE_SHEET)
