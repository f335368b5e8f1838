"""Hadoop's configuration files: writing the local cluster's, and reading a user's HADOOP_CONF_DIR.

A HADOOP_CONF_DIR is what spark-submit reads to find a YARN cluster (``yarn-site.xml``: the ResourceManager) and its
file system (``core-site.xml``: ``fs.defaultFS``). :func:`read_conf_dir` reads one through the tool's one reader
(size limits; broken XML is one line naming the file), and :class:`ClusterConf` is what the tool needs from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from cluster.errors import ClusterError

#: A site file is a few kB; anything past this is not one
MAX_SITE_BYTES = 4 * 1024 * 1024
SITE_FILES = ("core-site.xml", "hdfs-site.xml", "yarn-site.xml")
DEFAULT_RM_WEBAPP_PORT = 8088


class HadoopConfError(ClusterError):
    """A HADOOP_CONF_DIR that is missing, empty, or holds a file that is not Hadoop XML."""

    exit_code = 2


def site_xml(properties: Mapping[str, object]) -> str:
    """A ``*-site.xml`` holding ``properties`` (values escaped; nothing from a design file reaches here)."""
    rows = "".join(f"  <property><name>{escape(str(k))}</name><value>{escape(str(v))}</value></property>\n"
                   for k, v in properties.items())
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<configuration>\n{rows}</configuration>\n'


def write_site(path: Path, properties: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(site_xml(properties))
    os.replace(tmp, path)


def read_site(path: Path) -> dict[str, str]:
    """The properties of one site file; a clear error for anything that is not one."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise HadoopConfError(f"{path}: cannot be read ({e.strerror}); fix HADOOP_CONF_DIR") from None
    if size > MAX_SITE_BYTES:
        raise HadoopConfError(f"{path} is {size} bytes, more than a Hadoop site file ({MAX_SITE_BYTES}); "
                              "point HADOOP_CONF_DIR at the cluster's configuration folder")
    try:
        root = ElementTree.fromstring(path.read_bytes())
    except ElementTree.ParseError as e:
        raise HadoopConfError(f"{path} is not valid XML ({e}); fix it or point HADOOP_CONF_DIR at a good copy") from None
    if root.tag != "configuration":
        raise HadoopConfError(f"{path}: its root element is <{root.tag[:40]}>, not Hadoop's <configuration>")
    props: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name:
            props[name.strip()] = (value or "").strip()
    return props


@dataclass(frozen=True)
class ClusterConf:
    """What the tool reads from a HADOOP_CONF_DIR: where the ResourceManager's REST API and the file system are."""

    conf_dir: Path
    rm_webapp: str  # host:port of the ResourceManager's web services
    default_fs: str | None  # fs.defaultFS (None: the cluster's default, the local file system)

    @property
    def rm_url(self) -> str:
        return f"http://{self.rm_webapp}"


def conf_dir_from(environ: Mapping[str, str]) -> Path:
    """HADOOP_CONF_DIR, else YARN_CONF_DIR, as spark-submit reads them; one line naming the fix when neither is set."""
    for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR"):
        if environ.get(name):
            return Path(environ[name])
    raise HadoopConfError("--master yarn needs HADOOP_CONF_DIR (or YARN_CONF_DIR): export the folder of the cluster's "
                          "yarn-site.xml and core-site.xml, e.g. the line `sparkdl cluster start --yarn` prints")


def read_conf_dir(conf_dir: Path) -> ClusterConf:
    """The ResourceManager's web address and fs.defaultFS of ``conf_dir``; one line for a folder that is no Hadoop's."""
    if not conf_dir.is_dir():
        raise HadoopConfError(f"HADOOP_CONF_DIR {conf_dir} is not a folder: export the folder that holds the "
                              "cluster's yarn-site.xml")
    if not (conf_dir / "yarn-site.xml").is_file():
        raise HadoopConfError(f"HADOOP_CONF_DIR {conf_dir} has no yarn-site.xml: it is not a YARN cluster's "
                              "configuration (copy the cluster's /etc/hadoop/conf, or start one: sparkdl cluster "
                              "start --yarn)")
    yarn = read_site(conf_dir / "yarn-site.xml")
    core = read_site(conf_dir / "core-site.xml") if (conf_dir / "core-site.xml").is_file() else {}
    webapp = yarn.get("yarn.resourcemanager.webapp.address")
    if not webapp:
        host = yarn.get("yarn.resourcemanager.hostname")
        if not host:
            raise HadoopConfError(f"{conf_dir / 'yarn-site.xml'} names no ResourceManager (neither "
                                  "yarn.resourcemanager.webapp.address nor yarn.resourcemanager.hostname)")
        webapp = f"{host}:{DEFAULT_RM_WEBAPP_PORT}"
    return ClusterConf(conf_dir, webapp, core.get("fs.defaultFS") or None)
