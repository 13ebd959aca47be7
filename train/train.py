"""Train a preset: `python train/train.py CONFIG [--out DIR] [--section.key value ...]`.

The same as `jaxgames train CONFIG --run-dir DIR ...` (CONFIG: a preset name or a YAML file);
`--out` names the run folder (default runs/NAME).
"""

import sys

from jaxgames.cli import main

if __name__ == "__main__":
    args = ["--run-dir" if a == "--out" else a for a in sys.argv[1:]]
    sys.exit(main(["train", *args]))
