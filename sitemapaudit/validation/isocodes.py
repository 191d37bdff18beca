"""The language and region codes an hreflang value may name (Google reads ISO 639-1 languages
and ISO 3166-1 alpha-2 regions).

The tables are complete and lowercase (hreflang values compare case-insensitively).
"""

from __future__ import annotations

from typing import Final


def _codes(table: str) -> frozenset[str]:
    return frozenset(table.split())


def _mapping(table: str) -> dict[str, str]:
    return {code: value for code, _, value in (pair.partition(":") for pair in table.split())}


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

ISO_639_2_TO_1: Final[dict[str, str]] = _mapping(
    """
    aar:aa abk:ab afr:af aka:ak alb:sq amh:am ara:ar arg:an arm:hy asm:as ava:av ave:ae aym:ay
    aze:az
    bak:ba bam:bm baq:eu bel:be ben:bn bih:bh bis:bi bod:bo bos:bs bre:br bul:bg bur:my
    cat:ca ces:cs cha:ch che:ce chi:zh chu:cu chv:cv cor:kw cos:co cre:cr cym:cy cze:cs
    dan:da deu:de div:dv dut:nl dzo:dz
    ell:el eng:en epo:eo est:et eus:eu ewe:ee
    fao:fo fas:fa fij:fj fin:fi fra:fr fre:fr fry:fy ful:ff
    geo:ka ger:de gla:gd gle:ga glg:gl glv:gv gre:el grn:gn guj:gu
    hat:ht hau:ha heb:he her:hz hin:hi hmo:ho hrv:hr hun:hu hye:hy
    ibo:ig ice:is ido:io iii:ii iku:iu ile:ie ina:ia ind:id ipk:ik isl:is ita:it
    jav:jv jpn:ja
    kal:kl kan:kn kas:ks kat:ka kau:kr kaz:kk khm:km kik:ki kin:rw kir:ky kom:kv kon:kg kor:ko
    kua:kj kur:ku
    lao:lo lat:la lav:lv lim:li lin:ln lit:lt ltz:lb lub:lu lug:lg
    mac:mk mah:mh mal:ml mao:mi mar:mr may:ms mkd:mk mlg:mg mlt:mt mon:mn mri:mi msa:ms mya:my
    nau:na nav:nv nbl:nr nde:nd ndo:ng nep:ne nld:nl nno:nn nob:nb nor:no nya:ny
    oci:oc oji:oj ori:or orm:om oss:os
    pan:pa per:fa pli:pi pol:pl por:pt pus:ps
    que:qu
    roh:rm ron:ro rum:ro run:rn rus:ru
    sag:sg san:sa sin:si slk:sk slo:sk slv:sl sme:se smo:sm sna:sn snd:sd som:so sot:st spa:es
    sqi:sq srd:sc srp:sr ssw:ss sun:su swa:sw swe:sv
    tah:ty tam:ta tat:tt tel:te tgk:tg tgl:tl tha:th tib:bo tir:ti ton:to tsn:tn tso:ts tuk:tk
    tur:tr twi:tw
    uig:ug ukr:uk urd:ur uzb:uz
    ven:ve vie:vi vol:vo
    wel:cy wln:wa wol:wo
    xho:xh
    yid:yi yor:yo
    zha:za zho:zh zul:zu
    """
)
"""The 204 three-letter ISO 639-2 codes of the languages that have an ISO 639-1 code, each with
that code: the terminology code (``deu``, also ISO 639-3's) and the bibliographic one where it
differs (``ger``). A language tag never uses them (RFC 5646, section 2.2.1: a language with a
two-letter code takes that one), so ``eng`` is a mistake for ``en``."""

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
