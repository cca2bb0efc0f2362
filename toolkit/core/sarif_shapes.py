"""The SARIF 2.1.0 objects ``toolkit/core/sarif.py`` builds, as TypedDicts (for annotations
only: sarif imports this module under ``TYPE_CHECKING``, so it costs nothing at run time)."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class Text(TypedDict):
    text: str


class DefaultConfiguration(TypedDict):
    level: str


class DriverRule(TypedDict):
    id: str
    name: str
    shortDescription: Text
    fullDescription: Text
    help: Text
    defaultConfiguration: DefaultConfiguration


class Driver(TypedDict):
    name: str
    version: str
    informationUri: str
    rules: list[DriverRule]


class Tool(TypedDict):
    driver: Driver


class ArtifactLocation(TypedDict):
    uri: str
    uriBaseId: str


class Region(TypedDict):
    startLine: int
    startColumn: NotRequired[int]


class PhysicalLocation(TypedDict):
    artifactLocation: ArtifactLocation
    region: NotRequired[Region]


class Location(TypedDict):
    physicalLocation: PhysicalLocation


class ResultProperties(TypedDict):
    commit: str


class Result(TypedDict):
    ruleId: str
    ruleIndex: int
    level: str
    message: Text
    locations: list[Location]
    partialFingerprints: NotRequired[dict[str, str]]
    properties: NotRequired[ResultProperties]


class UriBase(TypedDict):
    description: Text


class Provenance(TypedDict):
    repositoryUri: str
    revisionId: str


class Run(TypedDict):
    tool: Tool
    originalUriBaseIds: dict[str, UriBase]
    columnKind: str
    results: list[Result]
    versionControlProvenance: NotRequired[list[Provenance]]


# "$schema" is not an identifier, hence the functional form.
Log = TypedDict("Log", {"$schema": str, "version": str, "runs": list[Run]})
