"""The Space's entry point (README: `app_file: app.py`): build the UI on the configured store."""
from space import build_demo, launch

demo = build_demo()
if __name__ == "__main__":
    launch(demo)
