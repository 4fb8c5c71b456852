from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import run_pb2 as _run_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DeleteViewRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteViewResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListViewsRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListViewsResponse(_message.Message):
    __slots__ = ["next_page_token", "views"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    views: _containers.RepeatedCompositeFieldContainer[View]
    def __init__(self, views: _Optional[_Iterable[_Union[View, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SaveViewRequest(_message.Message):
    __slots__ = ["view"]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    view: View
    def __init__(self, view: _Optional[_Union[View, _Mapping]] = ...) -> None: ...

class SaveViewResponse(_message.Message):
    __slots__ = ["created", "view"]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    created: bool
    view: View
    def __init__(self, view: _Optional[_Union[View, _Mapping]] = ..., created: bool = ...) -> None: ...

class View(_message.Message):
    __slots__ = ["filters", "name", "query", "saved_at", "saved_by"]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SAVED_AT_FIELD_NUMBER: _ClassVar[int]
    SAVED_BY_FIELD_NUMBER: _ClassVar[int]
    filters: ViewFilters
    name: str
    query: str
    saved_at: _timestamp_pb2.Timestamp
    saved_by: str
    def __init__(self, name: _Optional[str] = ..., query: _Optional[str] = ..., filters: _Optional[_Union[ViewFilters, _Mapping]] = ..., saved_by: _Optional[str] = ..., saved_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ViewFilters(_message.Message):
    __slots__ = ["created_after", "created_before", "plan_id", "run_id_contains", "statuses"]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_CONTAINS_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    plan_id: str
    run_id_contains: str
    statuses: _containers.RepeatedScalarFieldContainer[_run_pb2.RunStatus]
    def __init__(self, statuses: _Optional[_Iterable[_Union[_run_pb2.RunStatus, str]]] = ..., plan_id: _Optional[str] = ..., created_after: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., run_id_contains: _Optional[str] = ...) -> None: ...
