package main

// FerretDB 1.x runs an update as "find the matching documents, then write them back" with nothing
// holding the row in between, so two concurrent updateOne({_id, version: 1}) calls can both win.
// MongoDB guarantees single-document atomicity; to test adapters against that contract, this proxy
// sits in front of FerretDB and lets one command run at a time across all connections.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
)

const (
	headerLen    = 16
	opMsg        = 2013
	moreToCome   = 1 << 1
	maxMessageSz = 48 * 1024 * 1024
)

// serializer accepts MongoDB wire-protocol clients and forwards each request, and its reply,
// to the backend while holding one process-wide lock.
type serializer struct {
	backend func() (net.Conn, error)
	logger  *slog.Logger
	mu      sync.Mutex
}

func (s *serializer) serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.handle(c)
	}
}

func (s *serializer) handle(client net.Conn) {
	defer client.Close()
	backend, err := s.backend()
	if err != nil {
		s.logger.Error("serializer: backend connect", "err", err)
		return
	}
	defer backend.Close()
	for {
		req, err := readMessage(client)
		if err != nil {
			return
		}
		if err = s.roundTrip(backend, client, req); err != nil {
			s.logger.Debug("serializer: connection ends", "err", err)
			return
		}
	}
}

// roundTrip sends one request and relays its reply (none for a moreToCome request) under the lock.
func (s *serializer) roundTrip(backend, client net.Conn, req []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := backend.Write(req); err != nil {
		return err
	}
	if expectsNoReply(req) {
		return nil
	}
	reply, err := readMessage(backend)
	if err != nil {
		return err
	}
	_, err = client.Write(reply)
	return err
}

func expectsNoReply(msg []byte) bool {
	if len(msg) < headerLen+4 || binary.LittleEndian.Uint32(msg[12:16]) != opMsg {
		return false
	}
	return binary.LittleEndian.Uint32(msg[16:20])&moreToCome != 0
}

func readMessage(r io.Reader) ([]byte, error) {
	var header [headerLen]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(header[0:4]))
	if n < headerLen || n > maxMessageSz {
		return nil, fmt.Errorf("bad message length %d", n)
	}
	msg := make([]byte, n)
	copy(msg, header[:])
	if _, err := io.ReadFull(r, msg[headerLen:]); err != nil {
		return nil, err
	}
	return msg, nil
}
