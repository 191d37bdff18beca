"""The language and region codes an hreflang value may name (Google reads ISO 639-1 languages
and ISO 3166-1 alpha-2 regions).

Both tables are complete and lowercase (hreflang values compare case-insensitively).
"""

from __future__ import annotations

from typing import Final


def _codes(table: str) -> frozenset[str]:
    return frozenset(table.split())


ISO_639_1: Final[frozenset[str]] = _codes(
    """
    aa ab ae af ak am an ar as av ay az
    ba be bg bh bi bm bn bo br bs
    ca ce ch co cr cs cu cv cy
    da de dv dz
    ee el en eo es et eu
    fa ff fi fj fo fr fy
    ga gd gl gn gu gv
    ha he hi ho hr ht hu hy hz
    ia id ie ig ii ik io is it iu
    ja jv
    ka kg ki kj kk kl km kn ko kr ks ku kv kw ky
    la lb lg li ln lo lt lu lv
    mg mh mi mk ml mn mr ms mt my
    na nb nd ne ng nl nn no nr nv ny
    oc oj om or os
    pa pi pl ps pt
    qu
    rm rn ro ru rw
    sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw
    ta te tg th ti tk tl tn to tr ts tt tw ty
    ug uk ur uz
    ve vi vo
    wa wo
    xh
    yi yo
    za zh zu
    """
)
"""The 184 two-letter language codes of ISO 639-1."""

WITHDRAWN_639_1: Final[frozenset[str]] = frozenset({"in", "iw", "ji", "jw", "mo", "sh"})
"""Two-letter codes ISO 639-1 once had that the IANA language subtag registry (BCP 47) still
lists, deprecated in favour of ``id``, ``he``, ``yi``, ``jv`` and ``ro``, and ``sh``
(Serbo-Croatian). They name real languages (Google's own products long wrote ``iw``), so
they are not reported."""

ISO_3166_1_ALPHA_2: Final[frozenset[str]] = _codes(
    """
    ad ae af ag ai al am ao aq ar as at au aw ax az
    ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs bt bv bw by bz
    ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz
    de dj dk dm do dz
    ec ee eg eh er es et
    fi fj fk fm fo fr
    ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy
    hk hm hn hr ht hu
    id ie il im in io iq ir is it
    je jm jo jp
    ke kg kh ki km kn kp kr kw ky kz
    la lb lc li lk lr ls lt lu lv ly
    ma mc md me mf mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz
    na nc ne nf ng ni nl no np nr nu nz
    om
    pa pe pf pg ph pk pl pm pn pr ps pt pw py
    qa
    re ro rs ru rw
    sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st sv sx sy sz
    tc td tf tg th tj tk tl tm tn to tr tt tv tw tz
    ua ug um us uy uz
    va vc ve vg vi vn vu
    wf ws
    ye yt
    za zm zw
    """
)
"""The 249 officially assigned ISO 3166-1 alpha-2 country codes (unchanged since South Sudan's
SS in 2011). Not in it: the exceptionally reserved codes (UK, EU, UN, EZ, AC, CP, DG, EA, IC,
TA), transitionally reserved and deleted ones (AN, CS, YU, TP, ZR, SU, FX...) and the
user-assigned ranges (AA, QM-QZ, XA-XZ, ZZ)."""

REGIONS: Final[frozenset[str]] = ISO_3166_1_ALPHA_2 | {"xk"}
"""The region codes an hreflang may use: ISO 3166-1 alpha-2, plus XK, Kosovo's code. XK is
user-assigned in ISO 3166-1, but it is the code CLDR (and so most locale software), the
European Commission and the IMF use for Kosovo, which has no other: a page for Kosovo marked
``sq-XK`` is not a mistake."""
