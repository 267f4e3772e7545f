"""talkback_show -- matplotlib's backend in a talkback sandbox.

A sandbox has no display, so plt.show() would draw nothing and say so.
With this backend (MPLBACKEND=module://talkback_show, set in the image)
show() saves every open figure as a PNG under /work instead -- figure-1.png,
figure-2.png, ... in the order shown by this process -- and closes them.
talkback returns the images a call wrote under /work with its result, so
the figure comes back to the chat as it would have appeared on a screen.
Drawing and savefig() are matplotlib's own Agg backend, unchanged.  Nothing
is printed: a program's output stays what it prints itself.
"""
import os

from matplotlib import _pylab_helpers
from matplotlib.backend_bases import FigureManagerBase as FigureManager  # noqa: F401
from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas  # noqa: F401

FOLDER = os.environ.get("TALKBACK_FIGURES", "/work")
_shown = 0


def show(*args, **kwargs):
    """Save each open figure to FOLDER/figure-N.png, then close them."""
    global _shown
    managers = _pylab_helpers.Gcf.get_all_fig_managers()
    if managers:
        os.makedirs(FOLDER, exist_ok=True)
    for manager in managers:
        _shown += 1
        manager.canvas.figure.savefig(os.path.join(FOLDER, "figure-%d.png" % _shown))
    _pylab_helpers.Gcf.destroy_all()
