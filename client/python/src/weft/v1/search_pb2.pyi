from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
SEARCH_ATTRIBUTE_TYPE_BOOL: SearchAttributeType
SEARCH_ATTRIBUTE_TYPE_DOUBLE: SearchAttributeType
SEARCH_ATTRIBUTE_TYPE_INT: SearchAttributeType
SEARCH_ATTRIBUTE_TYPE_KEYWORD: SearchAttributeType
SEARCH_ATTRIBUTE_TYPE_TIME: SearchAttributeType
SEARCH_ATTRIBUTE_TYPE_UNSPECIFIED: SearchAttributeType

class CountRunsGroup(_message.Message):
    __slots__ = ["count", "value"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    count: int
    value: SearchAttributeValue
    def __init__(self, value: _Optional[_Union[SearchAttributeValue, _Mapping]] = ..., count: _Optional[int] = ...) -> None: ...

class CountRunsRequest(_message.Message):
    __slots__ = ["environment_id", "group_by", "project_id", "query"]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    environment_id: str
    group_by: str
    project_id: str
    query: str
    def __init__(self, query: _Optional[str] = ..., group_by: _Optional[str] = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ...) -> None: ...

class CountRunsResponse(_message.Message):
    __slots__ = ["count", "groups"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    count: int
    groups: _containers.RepeatedCompositeFieldContainer[CountRunsGroup]
    def __init__(self, count: _Optional[int] = ..., groups: _Optional[_Iterable[_Union[CountRunsGroup, _Mapping]]] = ...) -> None: ...

class ListSearchAttributesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListSearchAttributesResponse(_message.Message):
    __slots__ = ["attributes"]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.RepeatedCompositeFieldContainer[SearchAttributeDeclaration]
    def __init__(self, attributes: _Optional[_Iterable[_Union[SearchAttributeDeclaration, _Mapping]]] = ...) -> None: ...

class SearchAttributeDeclaration(_message.Message):
    __slots__ = ["name", "type"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: SearchAttributeType
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[SearchAttributeType, str]] = ...) -> None: ...

class SearchAttributeValue(_message.Message):
    __slots__ = ["bool_value", "double_value", "int_value", "keyword_value", "time_value"]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_VALUE_FIELD_NUMBER: _ClassVar[int]
    TIME_VALUE_FIELD_NUMBER: _ClassVar[int]
    bool_value: bool
    double_value: float
    int_value: int
    keyword_value: str
    time_value: _timestamp_pb2.Timestamp
    def __init__(self, keyword_value: _Optional[str] = ..., int_value: _Optional[int] = ..., double_value: _Optional[float] = ..., bool_value: bool = ..., time_value: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SearchAttributesUpserted(_message.Message):
    __slots__ = ["attributes"]
    class AttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: SearchAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[SearchAttributeValue, _Mapping]] = ...) -> None: ...
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.MessageMap[str, SearchAttributeValue]
    def __init__(self, attributes: _Optional[_Mapping[str, SearchAttributeValue]] = ...) -> None: ...

class SearchAttributeType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
