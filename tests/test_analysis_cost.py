"""What keeps an analysis job cheap (issue 39, item 3): a kind's report section imports that kind alone, and
matplotlib's mathtext cache holds a study's tick labels (the outputs these leave unchanged are checked by the
report and stats tests)."""

import json
import subprocess
import sys


def test_section_imports_only_its_own_kind():
    code = ("import json, sys; from nystrom_bench import studies; s = studies.section('samplers'); "
            "print(json.dumps([type(s).__name__, sorted({m.split('.')[2] for m in sys.modules "
            "if m.startswith('nystrom_bench.studies.') and m.count('.') >= 2})]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    name, kinds = json.loads(out.strip().splitlines()[-1])
    assert name == "SamplersSection"
    assert kinds == ["samplers"]


def test_unknown_kind_gets_the_generic_section():
    from nystrom_bench import sections, studies

    assert type(studies.section("no_such_kind")) is sections.Section


def test_pyplot_widens_the_mathtext_cache():
    from matplotlib import mathtext

    from nystrom_bench import report

    report.pyplot()
    report.pyplot()  # once: not wrapped twice
    cached = mathtext.MathTextParser._parse_cached
    assert cached.cache_info().maxsize == 4096
    assert not hasattr(cached.__wrapped__, "cache_info")
