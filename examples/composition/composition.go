// Package composition holds the activities and compensations of the
// composition example (examples/composition/order.yaml and notify.yaml).
// examples/composition/worker runs them.
//
// Layering: imports client/worker and the standard library only: an example
// sees Weft through its public SDK.
package composition

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"

	"github.com/weft-dev/weft/client/worker"
)

// Line is one line item of an order.
type Line struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// Reserve is reserve-stock's input.
type Reserve struct {
	Order string `json:"order"`
	Lines []Line `json:"lines"`
}

// Reservation is reserve-stock's output, and release-stock's input.
type Reservation struct {
	ReservationID string `json:"reservation_id"`
}

// StockCheck is check-stock's input.
type StockCheck struct {
	Reservation string `json:"reservation"`
}

// Stock is check-stock's output: the repeat step runs it until Ready.
type Stock struct {
	Checks int  `json:"checks"`
	Ready  bool `json:"ready"`
}

// Payment is charge-payment's input.
type Payment struct {
	Customer    string `json:"customer"`
	AmountCents int    `json:"amount_cents"`
	Order       string `json:"order"`
}

// Charge is charge-payment's output.
type Charge struct {
	ChargeID string `json:"charge_id"`
}

// Refund is refund-payment's input: the charge's id, which the compensation's
// input expression took from the charge step's output.
type Refund struct {
	ChargeID    string `json:"charge_id"`
	AmountCents int    `json:"amount_cents"`
}

// Notification is send-notification's input (the notify workflow's run input).
type Notification struct {
	To        string `json:"to"`
	Template  string `json:"template"`
	Reference string `json:"reference"`
	// Parcels are the tracking numbers a shipping notice lists.
	Parcels []string `json:"parcels,omitempty"`
}

// Sent is send-notification's output, the notify workflow's result.
type Sent struct {
	MessageID string `json:"message_id"`
}

// Parcel is ship-parcel's input: one line item of the order, an item of
// the ship step's fan-out (docs/semantics.md#for-each).
type Parcel struct {
	Order       string `json:"order"`
	Carrier     string `json:"carrier"`
	Reservation string `json:"reservation"`
	SKU         string `json:"sku"`
	Quantity    int    `json:"quantity"`
	Parcel      int    `json:"parcel"`
}

// Shipment is ship-parcel's output; the list of every line's is the order
// workflow's result.
type Shipment struct {
	Carrier  string `json:"carrier"`
	Tracking string `json:"tracking"`
}

// StockReadyAfter is how many checks the example's warehouse needs before
// the stock is ready: the repeat step runs check-stock this many times.
const StockReadyAfter = 2

// Register registers the example's activities and compensations on w.
// Every external call would pass worker.Info(ctx).IdempotencyKey, which is
// stable across retries, so a retried attempt cannot act twice.
func Register(w *worker.Worker, log *slog.Logger) {
	worker.Register(w, "reserve-stock", func(ctx context.Context, in Reserve) (Reservation, error) {
		if len(in.Lines) == 0 {
			return Reservation{}, worker.Fail(worker.ClassValidation, "no_lines", errors.New("an order needs at least one line"))
		}
		info := worker.Info(ctx)
		log.Info("reserved", "run_id", info.RunID, "lines", len(in.Lines))
		return Reservation{ReservationID: "rsv-" + short(info.IdempotencyKey)}, nil
	})
	worker.Register(w, "check-stock", func(ctx context.Context, in StockCheck) (Stock, error) {
		// A repeat step's later iterations see the previous one's output
		// under the step's own id (docs/semantics.md#repeat).
		prev, _, err := worker.Upstream[Stock](ctx, worker.Info(ctx).ActionID)
		if err != nil {
			return Stock{}, err
		}
		next := Stock{Checks: prev.Checks + 1}
		next.Ready = next.Checks >= StockReadyAfter
		log.Info("stock checked", "run_id", worker.Info(ctx).RunID, "checks", next.Checks, "ready", next.Ready)
		return next, nil
	})
	worker.Register(w, "charge-payment", func(ctx context.Context, in Payment) (Charge, error) {
		if in.AmountCents <= 0 {
			return Charge{}, worker.Fail(worker.ClassValidation, "bad_amount", errors.New("a charge needs a positive amount"))
		}
		info := worker.Info(ctx)
		log.Info("charged", "run_id", info.RunID, "amount_cents", in.AmountCents)
		return Charge{ChargeID: "ch-" + short(info.IdempotencyKey)}, nil
	})
	worker.Register(w, "send-notification", func(ctx context.Context, in Notification) (Sent, error) {
		info := worker.Info(ctx)
		log.Info("notified", "run_id", info.RunID, "template", in.Template)
		return Sent{MessageID: "msg-" + short(info.IdempotencyKey)}, nil
	})
	worker.Register(w, "ship-parcel", func(ctx context.Context, in Parcel) (Shipment, error) {
		info := worker.Info(ctx)
		log.Info("shipped", "run_id", info.RunID, "step", info.ActionID, "item", info.Index, "carrier", in.Carrier)
		return Shipment{Carrier: in.Carrier, Tracking: "trk-" + short(info.IdempotencyKey)}, nil
	})
	worker.RegisterCompensation(w, "release-stock", func(ctx context.Context, in Reservation) error {
		log.Info("released", "run_id", worker.Info(ctx).RunID, "reservation_id", in.ReservationID)
		return nil
	})
	worker.RegisterCompensation(w, "refund-payment", func(ctx context.Context, in Refund) error {
		log.Info("refunded", "run_id", worker.Info(ctx).RunID, "charge_id", in.ChargeID)
		return nil
	})
}

// short answers a short hash of an idempotency key, for the example's
// made-up ids: the same key, the same id.
func short(key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("%08x", h.Sum32())
}
