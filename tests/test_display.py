"""What counts as a figure only shown to people: a memory usage figure a function returns in units is one
(`return mem / 1024 / 1024`), a device's capacity returned in GB is not (it sizes something), and neither
is any other value divided by a constant (`return image.to("cuda") / 255.`)."""

from helpers import scan_snippet

from portcheck.model import Severity


def _one(source, code):
    found = [f for f in scan_snippet(source, target="neuron") if f.code == code]
    assert len(found) == 1, found
    return found[0]


def test_a_usage_figure_returned_in_megabytes_is_only_shown():
    f = _one(
        "import torch\ndef gpu_mem_usage():\n    used = torch.cuda.max_memory_allocated()\n"
        "    return used / 1024 / 1024\n",
        "RT003",
    )
    assert f.severity is Severity.INFO and "only shown" in f.note


def test_a_device_capacity_returned_in_gigabytes_sizes_something():
    f = _one(
        "import torch\ndef get_total_gpu_memory():\n    total = torch.cuda.get_device_properties(0).total_memory\n"
        "    return total / (1024 ** 3)\n",
        "RT007",
    )
    assert f.severity is Severity.MAJOR and "only shown" not in f.note


def test_a_value_divided_by_a_constant_is_no_figure():
    f = _one("import torch\ndef texture(mesh):\n    return mesh.map.to('cuda').permute(2, 0, 1) / 255.\n", "DEV001")
    assert f.severity is not Severity.INFO and "only shown" not in f.note


def test_a_hint_chosen_by_a_query_that_raises_is_no_display():
    # SpanBERT's trainer: the query stops the program without CUDA, whatever it then prints
    f = _one(
        "import torch\ndef build(self):\n    if torch.cuda.get_device_capability(0)[0] >= 7:\n"
        "        print('| NOTICE: your device may support faster training with --fp16')\n",
        "RT007",
    )
    assert f.severity is Severity.MAJOR and "only shown" not in f.note


def test_a_hint_chosen_by_a_query_that_answers_anywhere_is_only_shown():
    f = _one(
        "import torch\nif torch.cuda.get_arch_list():\n    print('built for', torch.version.cuda)\n",
        "RT007",
    )
    assert f.severity is Severity.INFO and "only shown" in f.note
